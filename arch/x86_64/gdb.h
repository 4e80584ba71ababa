/* arch/x86_64/gdb.h: the x86_64 side of the gdb remote stub -- what the interrupt dispatcher asks the debugger
 * (arch/x86_64/gdb_target.c) and the COM2 byte transport (arch/x86_64/gdb_uart.c). The protocol itself is
 * portable (gdbstub/); gdb_target.c implements its struct gdb_target and runs its sessions. */
#ifndef ARCH_X86_64_GDB_H
#define ARCH_X86_64_GDB_H

#include <stdbool.h>
#include "arch/x86_64/context.h"
#include "gdbstub/target.h"

/* ---- the debugger (gdb_target.c), called from interrupts.c ------------------------------------------ */

/* #DB (vector 1) and #BP (vector 3): true when the debugger took the exception (a breakpoint, a single step,
 * a debug-register hit, or the debugger's own trap) and ctx is to be resumed as it now stands; false when
 * the debugger is off, and the exception is an ordinary one. */
bool gdb_exception(struct context *ctx);

/* NMI, before anything else claims it: true when it was a stop request from the CPU that runs the debugger
 * (this CPU has then been stopped and released again, or the request was stale). */
bool gdb_nmi(struct context *ctx);

/* NMI while a panic is active: under gdb=panic this CPU parks with its registers saved, for the debugger the
 * panicking CPU runs, and never returns; otherwise returns at once (and the caller halts). */
void gdb_panic_park(struct context *ctx);

/* After a device interrupt's handler and EOI: enters the debugger with the interrupted context when the
 * COM2 receive interrupt asked for a stop (gdb attached, or sent Ctrl-C). One load when it did not. */
void gdb_after_irq(struct context *ctx);

/* ---- COM2 (gdb_uart.c) ------------------------------------------------------------------------------ */

/* Whether a UART answers at 0x2F8 (QEMU has one only with a second -serial); probes once. */
bool gdb_uart_present(void);
/* 115200 8N1, FIFOs on, receive interrupt routed (IRQ 3) but not enabled yet. False when absent. */
bool gdb_uart_init(void);
/* While the machine runs, gdb's bytes raise IRQ 3, whose handler calls gdb_request_stop(); while it is
 * stopped the stub polls. */
void gdb_uart_irq_enable(void);
void gdb_uart_irq_disable(void);
/* The polled transport (getc with a TSC-bounded timeout, putc); valid after gdb_uart_init(). */
extern const struct gdb_transport gdb_uart_transport;

/* The COM2 interrupt handler's request: the next gdb_after_irq() on this CPU enters the debugger, reporting
 * an interrupt (gdb's Ctrl-C) or an attach (a connecting gdb's first byte). */
void gdb_request_stop(bool interrupt);

#endif
