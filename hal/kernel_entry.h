/* hal/kernel_entry.h: the whole contract from the architecture into the portable kernel -- every entry point
 * arch/ calls in kernel/, with the moment it calls it and the context it is in. The other direction (what the
 * kernel asks of the CPU and the machine) is the rest of hal/. Besides these entry points arch/ uses the
 * kernel's plain libraries (kernel/lib/string.h, format.h, sink.h, log.h, heap.h, cmdline.h), which have no
 * context of their own to document, and the debugger's entry points from the trap, NMI and interrupt paths,
 * which gdbstub/stop.h documents (the debugger's timer poll is here, below). */
#ifndef HAL_KERNEL_ENTRY_H
#define HAL_KERNEL_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

struct context;

/* ---- boot (kernel/main.c) ------------------------------------------------------------------------------- */

/* From the boot CPU's entry code (arch/x86_64/boot.S), in long mode, interrupts off, on the boot stack, with
 * the boot loader's information pointer. Runs the boot sequence and becomes CPU 0's idle task. */
__attribute__((noreturn)) void kmain(uintptr_t boot_info);

/* ---- the scheduler (kernel/task.c) ---------------------------------------------------------------------- */

/* Once per CPU, during its bring-up, interrupts off: the calling context becomes this CPU's idle task,
 * running on [boot_stack_lo, boot_stack_hi). */
void sched_init_cpu(void *boot_stack_lo, void *boot_stack_hi);
/* An AP's last step of bring-up, after sched_init_cpu and its tick started: idles for good. */
__attribute__((noreturn)) void sched_idle_loop(void);
/* Each CPU's timer interrupt, interrupts off, after the EOI and profiler_tick: accounts the tick, wakes
 * sleepers, and may pick another task. Returns the context to resume (another task's is the switch). */
struct context *sched_tick(struct context *ctx);
/* The yield vector (cpu_yield()), interrupts off: the calling task gave up the CPU; returns the context to
 * resume. */
struct context *sched_switch(struct context *ctx);
/* After a device interrupt's handler and EOI, interrupts off: runs a task the handler woke when this CPU was
 * idle, instead of waiting for the next tick. Returns the context to resume. */
struct context *sched_after_irq(struct context *ctx);

/* ---- a spinlock's wait (kernel/profiler/lock_sites.c) ---------------------------------------------------- */

/* spin_lock_contended, declared beside the lock in hal/spinlock.h: any task-context code that takes a spinlock,
 * arch/'s included, calls it through the inline spin_lock_irqsave when the lock is held, interrupts masked. It
 * waits, takes the lock and counts the wait with atomics only (no lock, no allocation, no printing). */

/* ---- the profiler (kernel/profiler.c) ------------------------------------------------------------------- */

/* Each CPU's timer interrupt, interrupts off, before sched_tick: one atomic read when no run is active. In a
 * run: arms this CPU's counter on the run's first tick, watches that it still interrupts and keeps its NMI
 * time within budget, disarms it on the first tick after the stop -- or samples ctx when the tick is this
 * CPU's source. No locks, no allocation, no symbol lookup, no printing. */
void profiler_tick(const struct context *ctx);
/* NMI context, after the panic's and the debugger's claims: true when the NMI is this CPU's counter
 * overflowing (hal/pmu.h's pmu_nmi_is_mine), and then ctx was sampled (or dropped outside a run) and the time
 * since entry_cycles (cycles() at the NMI's entry) charged to the NMI budget. False: not the counter's. */
bool profiler_nmi(const struct context *ctx, uint64_t entry_cycles);
/* The profiler's stop request (hal/cpu.h's cpu_send_profiler_stop), interrupts off, on the CPU it was sent to:
 * lets go of a stopping run here (disarms this CPU's counter and masks its LVT entry, then tells the stop), as
 * this CPU's next tick would have. Nothing to do when it already has, or no run is stopping. */
void profiler_stop_request(void);

/* ---- the debugger (gdbstub/) -------------------------------------------------------------------------- */

/* Each CPU's timer interrupt, interrupts off, after profiler_tick and before gdb_after_irq: the debugger's own
 * look at what a wedged kernel would not deliver to it. Under gdb.udp= CPU 0 polls the card itself when the
 * network task has not for a while (gdbstub/udp_nic.c), and a stop a datagram asks for is requested here, to
 * be taken by the gdb_after_irq that follows; anywhere else it returns at once. No locks, no allocation, no
 * printing. */
void debugger_timer_poll(void);

/* ---- console input (kernel/console.c) ------------------------------------------------------------------- */

/* From the serial and keyboard interrupt handlers, interrupts off, with each character received. Returns
 * false, dropping c, when the input ring is full; a driver that can hold input back (the UART) asks
 * console_input_has_room() first and pauses until the console calls console_input_resume() (hal/platform.h). */
bool console_input_char(char c);
bool console_input_has_room(void);

/* ---- panics (kernel/panic.c) ---------------------------------------------------------------------------- */

/* A broken invariant, from any context (an interrupt or NMI included): prints the reason and a backtrace,
 * stops every other CPU and never returns. */
__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
/* From an exception or a genuine NMI, with the interrupted context: the reason, then that context's CPU, task,
 * registers and backtrace. */
__attribute__((noreturn, format(printf, 2, 3))) void panic_at(const struct context *ctx, const char *fmt, ...);
/* NMI context, first thing: true once any CPU has begun to panic (the NMI is the panicking CPU stopping this
 * one, which then halts). */
bool panic_active(void);

#endif
