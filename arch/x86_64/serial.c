/* arch/x86_64/serial.c: COM1, the 16550 UART at 0x3F8 that is kprof's main console (QEMU -serial stdio).
 * Output is polled on the transmit-holding-register-empty bit; input is interrupt driven (IRQ 4 through the
 * IOAPIC) and every received byte goes to console_input_char(). */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "hal/platform.h"

#include <stdatomic.h>

#define COM1 0x3F8
#define UART_DATA 0
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20

void serial_init(void)
{
    outb(COM1 + UART_IER, 0x00);
    outb(COM1 + UART_LCR, 0x80); /* DLAB: divisor 1 = 115200 baud */
    outb(COM1 + UART_DATA, 0x01);
    outb(COM1 + UART_IER, 0x00);
    outb(COM1 + UART_LCR, 0x03); /* 8N1 */
    outb(COM1 + UART_FCR, 0xC7); /* FIFOs on, cleared, 14-byte threshold */
    outb(COM1 + UART_MCR, 0x0B); /* DTR, RTS, OUT2 (OUT2 gates the IRQ line) */
}

static atomic_bool rx_paused;

/* Reads only while the console has room. When it has none, the receive interrupt is switched off and the bytes
 * stay in the UART, where QEMU's backpressure (or the sender's flow control) holds the rest: a pasted line is
 * delayed, never cut. console_input_resume() switches it back on. */
static void serial_irq(void *arg)
{
    (void)arg;
    while (inb(COM1 + UART_LSR) & LSR_DATA_READY) {
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
        outb(COM1 + UART_IER, 0x01); /* data still waiting raises the interrupt again at once */
}

void serial_enable_input(void)
{
    irq_attach_isa(4, serial_irq, 0);
    outb(COM1 + UART_IER, 0x01); /* received data available */
    serial_irq(0);               /* bytes that arrived before the IRQ was routed */
}

static void serial_putc(char c)
{
    for (int spins = 0; spins < 100000 && !(inb(COM1 + UART_LSR) & LSR_THR_EMPTY); spins++)
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
