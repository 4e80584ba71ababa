/* arch/x86_64/serial.c: COM1, the 16550 UART at 0x3F8 that is kprof's main console (QEMU -serial stdio).
 * Output is polled on the transmit-holding-register-empty bit; input is interrupt driven (IRQ 4 through the
 * IOAPIC) and every received byte goes to console_input_char(). Registers and line set-up:
 * arch/x86_64/uart16550.h. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/uart16550.h"
#include "arch/x86_64/x86.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "hal/platform.h"

#include <stdatomic.h>

#define COM1 0x3F8

void serial_init(void)
{
    uart16550_setup(COM1, UART_FCR_ENABLE | UART_FCR_CLEAR_BOTH | UART_FCR_TRIGGER_14);
}

static atomic_bool rx_paused;

/* Reads only while the console has room. When it has none, the receive interrupt is switched off and the bytes
 * stay in the UART, where QEMU's backpressure (or the sender's flow control) holds the rest: a pasted line is
 * delayed, never cut. console_input_resume() switches it back on. */
static void serial_irq(void *arg)
{
    (void)arg;
    while (inb(COM1 + UART_LSR) & UART_LSR_DATA_READY) {
        if (!console_input_has_room()) {
            outb(COM1 + UART_IER, 0x00);
            atomic_store(&rx_paused, true);
            return;
        }
        console_input_char((char)inb(COM1 + UART_DATA));
    }
}

void console_input_resume(void)
{
    if (atomic_exchange(&rx_paused, false))
        outb(COM1 + UART_IER, UART_IER_RX_AVAILABLE); /* data still waiting raises the interrupt again at once */
}

void serial_enable_input(void)
{
    irq_attach_isa(4, serial_irq, 0);
    outb(COM1 + UART_IER, UART_IER_RX_AVAILABLE);
    serial_irq(0);               /* bytes that arrived before the IRQ was routed */
}

static void serial_putc(char c)
{
    for (int spins = 0; spins < 100000 && !(inb(COM1 + UART_LSR) & UART_LSR_THR_EMPTY); spins++)
        pause();
    outb(COM1 + UART_DATA, (uint8_t)c);
}

void serial_write(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            serial_putc('\r');
        serial_putc(text[i]);
    }
}
