/* gdbstub/stop.h: stopping and resuming every CPU around a debugger session -- the arch-neutral state
 * machine (gdbstub/stop.c), the way kgdb's debug core sits above its arch part. Whatever stops a CPU (a
 * breakpoint, a step, a debug-register hit, gdb attaching or sending Ctrl-C, gdb=wait, a panic under
 * gdb=panic) ends here; one CPU leads the session, every other CPU parks until the session lets it go.
 *
 * What it needs of the machine is struct gdb_arch_ops, below; the architecture (arch/x86_64/gdb_*.c) fills
 * it in, and tests/unit/gdb_stop_cpus.c fills it with threads standing in for CPUs. Every hook may be
 * called with interrupts off, most in NMI or exception context: none may lock, allocate or print. */
#ifndef GDBSTUB_STOP_H
#define GDBSTUB_STOP_H

#include <stdbool.h>
#include <stdint.h>

#include "gdbstub/stub.h"
#include "gdbstub/target.h"

struct context;

struct gdb_arch_ops {
    /* The calling CPU, how many CPUs there are (0 .. cpu_count() - 1) and whether one is up. */
    unsigned (*this_cpu)(void);
    unsigned (*cpu_count)(void);
    bool (*cpu_online)(unsigned cpu);

    /* Makes a running CPU enter gdb_stop_nmi() soon, whatever it is doing, interrupts off or not
     * (x86: an NMI to that CPU alone). */
    void (*stop_cpu)(unsigned cpu);
    /* Wakes a parked CPU out of park_idle() so that it looks at its state again (x86: an IPI). */
    void (*wake_cpu)(unsigned cpu);
    /* On the CPU itself as it stops, its context saved: keep whatever else gdb may read of it beside the
     * context (x86: the task it ran, FS base, segment selectors, GS base). */
    void (*save_cpu_state)(unsigned cpu, struct context *ctx);

    /* Parking. park_begin returns whether this CPU may sleep while parked and holds back what must not run
     * on it meanwhile (x86: no sleep on the NMI stack; CR8 keeps every vector below the wake-up's out),
     * leaving in *saved what park_end(sleep, saved) puts back; park_idle waits once -- until an interrupt
     * when it may sleep, else a short spin (polls counts the calls). The caller checks its state just before
     * park_idle with interrupts off, so a wake-up after the check must end the wait (x86: sti; hlt). Parks
     * can nest on one CPU (a stop request as it leaves the debugger parks it again before the first park has
     * returned), so *saved lives in each park's frame, never in per-CPU storage. */
    bool (*park_begin)(uint64_t *saved);
    void (*park_idle)(bool sleep, unsigned polls);
    void (*park_end)(bool sleep, uint64_t saved);
    /* A CPU that stop_cpu stopped, in NMI context: true when ctx was rewritten so that, once the NMI
     * handler returns, the CPU calls gdb_stop_park_detoured() outside NMI context; false to park right here. */
    bool (*leave_nmi)(struct context *ctx);

    /* Single step: arms ctx to trap after one instruction (x86: TF), returning whether it also masked
     * interrupts for that instruction; step_end disarms it and, when unmask, gives interrupts back. */
    bool (*step_begin)(struct context *ctx);
    void (*step_end)(struct context *ctx, bool unmask);
    /* skip: a hardware breakpoint at ctx's pc must not fire again at once when ctx resumes (x86: RF);
     * !skip: undoes that. */
    void (*skip_hw_break)(struct context *ctx, bool skip);
    /* Loads the breakpoint table's hardware breakpoints (gdb_break_hw_slot) on this CPU. */
    void (*load_debug_regs)(void);
    /* Points ctx back at addr: a software breakpoint's instruction runs once its byte is back. */
    void (*set_pc)(struct context *ctx, uint64_t addr);
    /* Whether the breakpoint instruction is (still) at addr, or that cannot be told (x86: a page-walked
     * read finds 0xCC there, or cannot read). */
    bool (*break_insn_at)(uint64_t addr);
    /* The debugger's own stop at this point: executes the breakpoint instruction, which comes back through
     * gdb_stop_breakpoint_insn() with this function's registers as the stopped context. */
    void (*trap)(void);

    /* The transport's interrupt, on while the machine runs and off during a session (x86: COM2's IRQ); on,
     * delivered to cpu (-1: the CPU it usually goes to). */
    void (*transport_irq)(bool on, int cpu);
    /* A spin-wait hint. */
    void (*relax)(void);
};

/* Starts the debugger: from now on stops are taken. target is what sessions run the stub against, transport
 * the one they talk on until a transport's own stop (gdb_request_stop, gdb_stop_for_transport) picks
 * another; stop_on_panic is gdb=panic. Resets all state (host tests start each case with it). */
void gdb_stop_init(const struct gdb_arch_ops *ops, const struct gdb_target *target,
                   const struct gdb_transport *transport, bool stop_on_panic);
/* Whether gdb_stop_init ran: before it, or with the debugger off, every entry below declines. */
bool gdb_stop_enabled(void);

/* ---- entries from the machine's trap, NMI and interrupt paths ---------------------------------------- */

/* The breakpoint instruction at addr was executed (ctx's pc is just past it): true when the debugger took
 * it and ctx is to be resumed as it now stands; false when it is not the debugger's (it is off). */
bool gdb_stop_breakpoint_insn(struct context *ctx, uint64_t addr);
/* A debug trap after the arch decoded it: stepped (the single step completed) and/or hits (bit i: the enabled
 * debug register in slot i matched -- an execution breakpoint at ctx's pc, or a watchpoint's access just
 * done). True when taken, as above. */
bool gdb_stop_debug_trap(struct context *ctx, bool stepped, unsigned hits);
/* An NMI, before anything else claims it: true when it was the leader's stop request (this CPU has been
 * stopped and released again, will park once the handler returns, or the request was stale). */
bool gdb_stop_nmi(struct context *ctx);
/* The CPU leave_nmi() sent away: parks with saved, and returns once released. */
void gdb_stop_park_detoured(struct context *saved);
/* From the transport's interrupt while the machine runs: the next gdb_after_irq() on this CPU enters the
 * debugger, reporting an interrupt (gdb's Ctrl-C) or an attach (a connecting gdb's first byte), and the
 * session talks on tr (NULL: on the transport of the last session). */
void gdb_request_stop(const struct gdb_transport *tr, bool interrupt);
/* After a device interrupt's handler and EOI: enters the debugger with the interrupted context when
 * gdb_request_stop() asked. One load when it did not. */
void gdb_after_irq(struct context *ctx);
/* gdb=wait at boot: stops here until gdb connects and resumes. */
void gdb_stop_wait_for_gdb(void);
/* From task context (the network task, which a datagram from gdb reached): stops here, as gdb_request_stop
 * would at the end of an interrupt, with the session on tr; returns once the machine resumes. */
void gdb_stop_for_transport(const struct gdb_transport *tr, bool interrupt);
/* NMI while a panic is active: under gdb=panic this CPU parks with its registers saved, for the debugger the
 * panicking CPU runs, and never returns; otherwise returns at once (and the caller halts). */
void gdb_panic_park(struct context *ctx);
/* gdb_panic_enter() (hal/debug.h) is defined here as well. */

/* ---- for the target the sessions run against ------------------------------------------------------------ */

/* target->resume: records what the session's end lets run -- cpu steps when step, or runs; the others stay
 * parked when others_stay (cpu -1: every CPU runs). */
void gdb_stop_resume(int cpu, bool step, bool others_stay);
/* The saved context of a CPU gdb may look at: the leader's own, or a parked CPU's; NULL otherwise. */
struct context *gdb_stopped_context(unsigned cpu);
/* Runs fn(arg) on cpu -- here when it is this CPU, else on that CPU while it is parked -- and waits for
 * it, bounded. False when cpu is not stopped or did not answer in time; a CPU that never answers gets no
 * further request, so arg must outlive the call (static storage). */
bool gdb_on_cpu(unsigned cpu, void (*fn)(void *arg), void *arg);
/* Whether a panic handed the machine to the debugger: nothing runs again. */
bool gdb_stop_panicked(void);

#endif
