/* arch/x86_64/gdb.h: the x86_64 side of the gdb remote stub. The protocol (gdbstub/) and the stop/resume
 * state machine of every CPU (gdbstub/stop.c) are portable; this is what they need of the machine, one file
 * per subject:
 *   gdb_target.c   the struct gdb_target and struct gdb_arch_ops they run against (hal/debug.h's
 *                  gdb_arch_target and gdb_arch_ops)
 *   gdb_memory.c   memory through the page tables that never faults, and the int3 bytes
 *   gdb_debugreg.c #BP/#DB decoded for the state machine, debug registers, trap and resume flags
 *   gdb_nmi.c      stopping a CPU by NMI, the detour out of NMI context, how a parked CPU sleeps
 *   gdb_regs.c     the register table (arch/x86_64/gdb_regs.h)
 *   gdb_uart.c     COM2, the byte transport (hal/debug.h's gdb_arch_uart; registers in uart16550.h)
 * gdb= and the choice of transport are the debugger's own (gdbstub/setup.c). interrupts.c calls gdb_exception,
 * gdb_nmi, gdb_panic_park and gdb_after_irq (gdbstub/stop.h), and debugger_timer_poll (hal/kernel_entry.h). */
#ifndef ARCH_X86_64_GDB_H
#define ARCH_X86_64_GDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/context.h"
#include "arch/x86_64/gdb_regs.h" /* gdb_x86_canonical */
#include "gdbstub/stop.h"
#include "gdbstub/target.h"

/* ---- called from interrupts.c ------------------------------------------------------------------------ */

/* #DB (vector 1) and #BP (vector 3): true when the debugger took the exception (a breakpoint, a single step,
 * a debug-register hit, or the debugger's own trap) and ctx is to be resumed as it now stands; false when
 * the debugger is off, and the exception is an ordinary one. (gdb_debugreg.c) */
bool gdb_exception(struct context *ctx);

/* NMI, before anything else claims it: true when it was a stop request from the CPU that runs the debugger
 * (this CPU has then been stopped and released again, or will park once the NMI returns, or the request
 * was stale). (gdb_nmi.c) */
bool gdb_nmi(struct context *ctx);

/* nmi()'s first and last steps: the debug registers off for the handler's body, then back as this CPU last
 * loaded them. A watchpoint or hardware breakpoint hit inside the handler would take a #DB whose IRET ends the
 * CPU's blocking of NMIs under the live NMI frame; the handler walks any task's stack, so no table of
 * addresses could keep watchpoints off what it reads. One load each when no debug register is in use; the
 * stub's software breakpoints are refused on the NMI path instead (linker.ld). (gdb_debugreg.c) */
void gdb_x86_debug_regs_pause(void);
void gdb_x86_debug_regs_resume(void);

/* ---- gdb_memory.c ---------------------------------------------------------------------------------------- */

/* Whether [addr, addr + len) is mapped (and writable, when write), page by page in the live page tables. */
bool gdb_x86_range_ok(uint64_t addr, size_t len, bool write);
/* One byte from a present page; false, nothing read, when it is not. */
bool gdb_x86_peek(uint64_t addr, uint8_t *byte);
/* target->mem_read/mem_write: all of the range, or nothing when any page is missing (or read-only). */
bool gdb_x86_mem_read(uint64_t addr, void *buf, size_t len);
bool gdb_x86_mem_write(uint64_t addr, const void *buf, size_t len);
/* target->sw_break_plant/unplant: int3 in, the byte back -- on read-only text too. */
bool gdb_x86_sw_break_plant(uint64_t addr, uint8_t *saved);
bool gdb_x86_sw_break_unplant(uint64_t addr, uint8_t saved);
/* arch->break_insn_at: an int3 at addr, or addr cannot be read. */
bool gdb_x86_break_insn_at(uint64_t addr);

/* ---- gdb_debugreg.c -------------------------------------------------------------------------------------- */

#define GDB_X86_HW_BREAKS 4
bool gdb_x86_hw_break_valid(uint64_t addr);
void gdb_x86_load_debug_regs(void);
void gdb_x86_disarm_debug_regs(void);
bool gdb_x86_step_begin(struct context *ctx);
void gdb_x86_step_end(struct context *ctx, bool unmask);
void gdb_x86_skip_hw_break(struct context *ctx, bool skip);
void gdb_x86_set_pc(struct context *ctx, uint64_t addr);
void gdb_x86_trap(void);

/* ---- gdb_nmi.c ------------------------------------------------------------------------------------------- */

void gdb_x86_stop_cpu(unsigned cpu);
void gdb_x86_wake_cpu(unsigned cpu);
bool gdb_x86_park_begin(uint64_t *saved_tpr);
void gdb_x86_park_idle(bool sleep, unsigned polls);
void gdb_x86_park_end(bool sleep, uint64_t saved_tpr);
bool gdb_x86_leave_nmi(struct context *ctx);

/* ---- COM2 (gdb_uart.c) ------------------------------------------------------------------------------ */

/* Whether a UART answers at 0x2F8 (QEMU has one only with a second -serial); probes once. */
bool gdb_uart_present(void);
/* 115200 8N1, FIFOs on, receive interrupt routed (IRQ 3) but not enabled yet. False when absent. */
bool gdb_uart_init(void);
/* While the machine runs, gdb's bytes raise IRQ 3 on `cpu` (a parked CPU takes no device interrupt: with
 * one CPU running alone it goes there), whose handler calls gdb_request_stop(); while it is stopped the
 * stub polls. */
void gdb_uart_irq_enable(unsigned cpu);
void gdb_uart_irq_disable(void);
/* The polled transport (getc with a TSC-bounded timeout, putc); valid after gdb_uart_init(). */
extern const struct gdb_transport gdb_uart_transport;

#endif
