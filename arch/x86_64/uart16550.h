/* arch/x86_64/uart16550.h: the 16550 UART's registers and bits, and the line set-up both of kprof's UARTs
 * share -- COM1, the console (arch/x86_64/serial.c), and COM2, the debugger's (arch/x86_64/gdb_uart.c). Only
 * what they use: offsets from the UART's I/O base, the bits they set and test. */
#ifndef ARCH_X86_64_UART16550_H
#define ARCH_X86_64_UART16550_H

#include <stdint.h>

#include "arch/x86_64/x86.h"

/* Register offsets from the base port. DATA and IER are the divisor's low and high bytes while LCR_DLAB is
 * set. */
#define UART_DATA 0
#define UART_IER 1
#define UART_IIR 2 /* read; FCR when written */
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_SCRATCH 7

#define UART_IER_RX_AVAILABLE 0x01 /* interrupt when received data is available */
#define UART_IER_THR_EMPTY 0x02    /* interrupt when the transmit FIFO has emptied */
#define UART_IIR_NONE 0x01         /* IIR: no interrupt pending (reading IIR clears a THR-empty one) */
/* FCR: FIFOs on, both cleared, and the receive FIFO's trigger level -- 1 byte or 14 (bits 6-7). */
#define UART_FCR_ENABLE 0x01
#define UART_FCR_CLEAR_BOTH 0x06
#define UART_FCR_TRIGGER_1 0x00
#define UART_FCR_TRIGGER_14 0xC0
#define UART_LCR_DLAB 0x80 /* the divisor latch in place of DATA and IER */
#define UART_LCR_8N1 0x03
#define UART_MCR_DTR_RTS_OUT2 0x0B /* OUT2 gates the IRQ line */
#define UART_LSR_DATA_READY 0x01
#define UART_LSR_THR_EMPTY 0x20
#define UART_TX_FIFO 16 /* bytes the transmit FIFO takes once THR-empty shows */

/* 115200 baud (divisor 1), 8N1, the FIFOs as fcr says, DTR, RTS and OUT2; every interrupt off. */
static inline void uart16550_setup(uint16_t base, uint8_t fcr)
{
    outb(base + UART_IER, 0x00);
    outb(base + UART_LCR, UART_LCR_DLAB);
    outb(base + UART_DATA, 0x01);
    outb(base + UART_IER, 0x00);
    outb(base + UART_LCR, UART_LCR_8N1);
    outb(base + UART_FCR, fcr);
    outb(base + UART_MCR, UART_MCR_DTR_RTS_OUT2);
}

#endif
