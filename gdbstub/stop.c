/* gdbstub/stop.c: the stop/resume state machine of every CPU (gdbstub/stop.h), arch-neutral.
 *
 * Stopping. Whatever stops the machine ends in enter() on one CPU, which becomes the leader (the owner) by
 * winning `owner`. It asks every other running CPU to stop (its stop_req flag, then arch->stop_cpu, an NMI
 * on x86) and waits until each has parked: saved a pointer to its interrupted context and stopped in
 * park(). A CPU stopped that way parks outside NMI context if the arch can send it there (leave_nmi), so
 * that it can sleep and be woken by an ordinary interrupt; a CPU that hits a trap of its own while another
 * CPU leads parks as that session's (its event is not lost: a software breakpoint is rewound and fires
 * again once released, if still there). Then the leader runs the protocol (gdb_stub_session).
 *
 * Resuming. The stub's resume() only records the choice; when the session returns the leader releases the
 * parked CPUs that are to run (state PARKED -> RELEASING, then a wake-up; each loads the debug registers
 * itself and goes back to RUNNING), clears `owner` and returns into its own context, or -- stepping another
 * CPU with the rest held (vCont;s:N) -- parks itself, and the stepped CPU's trap makes it the next leader. A
 * new session may begin while CPUs of the last one are still leaving: gdb_stop_nmi() puts those back where
 * they were, and a CPU that reaches the debugger's lock as a session closes waits for it and reports its own
 * stop.
 *
 * What a stopped CPU does for the leader. MSRs and the local APIC are per CPU, so a parked CPU serves a
 * mailbox: the leader posts a function, the parked CPU runs it on itself and says it is done. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/breakpoints.h"
#include "gdbstub/stop.h"
#include "gdbstub/stub.h"
#include "hal/context.h"
#include "hal/cpu.h"
#include "hal/debug.h"

/* How long the leader waits for a CPU to park, and for a parked CPU to answer the mailbox. Generous: under
 * TCG four vCPUs share fewer host cores, and a CPU may be in a long NMI handler. */
#define STOP_WAIT_NS (2000 * 1000000ll)
#define MAILBOX_WAIT_NS (1000 * 1000000ll)

enum cpu_state { CPU_RUNNING, CPU_PARKED, CPU_RELEASING };
enum mbox_state { MBOX_IDLE, MBOX_REQUEST, MBOX_DONE };

struct stop_cpu {
    _Atomic int state;           /* enum cpu_state; written by the CPU itself, but PARKED -> RELEASING by the owner */
    atomic_bool stop_req;        /* the owner's NMI is a stop request */
    int depth;                   /* >0 while this CPU is parked or runs a session: traps here are the debugger's own */
    struct context *ctx;         /* the interrupted context, while parked or owning */
    bool stepping;               /* released stepping: its next single-step trap is the step */
    bool step_masked;            /* interrupts were masked for that one instruction, to be given back */
    struct context *step_ctx;    /* the context released stepping */
    unsigned step_session;       /* `sessions` when it was: a later session makes the step stale */
    bool trap_pending;           /* the breakpoint instruction this CPU is about to execute is trap()'s */
    bool in_park;                /* between parking and running again, park()'s loop included */
    bool released;               /* an owner let it go (it was part of that session), not left by itself */
    bool trapping;               /* between its own stop (a trap, the transport's interrupt) and parking or owning */
    atomic_bool stop_waiting;    /* a stop request gdb_stop_nmi left for enter() or park() to act on */
    enum stop_reason trap_why;
    /* The mailbox, served while parked. */
    _Atomic int mbox;            /* enum mbox_state */
    void (*fn)(void *arg);
    void *arg;
} __attribute__((aligned(64)));

static struct stop_cpu cpus[MAX_CPUS];
static atomic_int owner = -1;           /* the CPU running a session, -1 when none */
static atomic_bool closing = true;      /* the session is over or letting CPUs go: none may join it */
static atomic_uint sessions;            /* sessions begun so far */
static atomic_bool irq_stop_pending;    /* the transport saw gdb: enter at the end of this interrupt */
static enum stop_reason irq_stop_reason;
static bool enabled;
static bool stop_on_panic;              /* gdb=panic */
static bool panicked;                   /* a panic handed the machine to the debugger: nobody runs again */
static const struct gdb_arch_ops *arch;
static const struct gdb_target *target;
static const struct gdb_transport *transport;

/* The stub's choice for the end of the session (gdb_stop_resume()). */
static int resume_step_cpu;
static bool resume_others_stay;

void gdb_stop_init(const struct gdb_arch_ops *ops, const struct gdb_target *t, const struct gdb_transport *tr,
                   bool panic_stops)
{
    for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
        struct stop_cpu *c = &cpus[cpu];
        atomic_store(&c->state, CPU_RUNNING);
        atomic_store(&c->stop_req, false);
        atomic_store(&c->stop_waiting, false);
        atomic_store(&c->mbox, MBOX_IDLE);
        c->depth = 0;
        c->ctx = NULL;
        c->stepping = c->step_masked = c->trap_pending = c->in_park = c->released = c->trapping = false;
        c->step_ctx = NULL;
    }
    atomic_store(&owner, -1);
    atomic_store(&closing, true);
    atomic_store(&sessions, 0);
    atomic_store(&irq_stop_pending, false);
    panicked = false;
    arch = ops;
    target = t;
    transport = tr;
    stop_on_panic = panic_stops;
    enabled = true;
}

bool gdb_stop_enabled(void) { return enabled; }
bool gdb_stop_panicked(void) { return panicked; }

/* ---- parked CPUs and their mailbox ------------------------------------------------------------------------ */

static void mailbox_serve(struct stop_cpu *c)
{
    if (atomic_load_explicit(&c->mbox, memory_order_acquire) != MBOX_REQUEST)
        return;
    c->fn(c->arg);
    atomic_store_explicit(&c->mbox, MBOX_DONE, memory_order_release);
}

static void record(unsigned me, struct stop_cpu *c, struct context *ctx)
{
    c->ctx = ctx;
    arch->save_cpu_state(me, ctx);
}

static void unprepare_release(struct stop_cpu *c);

/* How a CPU came to park. PARK_ASKED: the owner's stop request. PARK_LOSER: a trap of its own while another
 * CPU owned the debugger. Either leaves at once, unseen, when the session it would join is over or already
 * letting CPUs go (`closing`): nobody would release it. PARK_HELD: held for good (a panic) or until the CPU
 * it lets step becomes the owner; it waits whatever happens. */
enum park_mode { PARK_ASKED, PARK_LOSER, PARK_HELD };

/* Stopped: context saved, serving the mailbox, until the owner moves this CPU to RELEASING. False when it
 * left by itself, unseen by any session (see enum park_mode). */
static bool park(struct context *ctx, enum park_mode mode)
{
    unsigned me = arch->this_cpu();
    struct stop_cpu *c = &cpus[me];
    c->in_park = true; /* from here on gdb_stop_nmi() leaves a stop request to this function */
    c->depth++;
    record(me, c, ctx);
    uint64_t held; /* what park_begin holds back, in this frame: parks can nest */
    bool sleep = arch->park_begin(&held);
    c->released = false;
    for (;;) {
        atomic_store(&c->state, CPU_PARKED);
        atomic_store(&c->stop_waiting, false); /* parked: any session now sees it so */
        /* Sequentially consistent with the owner's store to `closing` and its load of this state: one of
         * the two sees the other, so a CPU is either released by the owner or leaves here by itself. */
        if (mode != PARK_HELD && (atomic_load(&closing) || atomic_load(&owner) < 0)) {
            int parked = CPU_PARKED;
            atomic_compare_exchange_strong(&c->state, &parked, CPU_RELEASING);
        }
        for (;;) {
            for (unsigned polls = 0; atomic_load(&c->state) == CPU_PARKED; polls++) {
                mailbox_serve(c);
                if (atomic_load(&c->state) == CPU_PARKED && atomic_load(&c->mbox) != MBOX_REQUEST)
                    arch->park_idle(sleep, polls);
            }
            arch->load_debug_regs();
            int releasing = CPU_RELEASING;
            if (atomic_compare_exchange_strong(&c->state, &releasing, CPU_RUNNING))
                break;
            /* A new session's stop request came while this CPU was leaving (gdb_stop_nmi put it back to
             * PARKED): it stays, with the same context, and what the last release prepared is undone. */
            unprepare_release(c);
        }
        c->in_park = false;
        if (!atomic_exchange(&c->stop_waiting, false))
            break;
        /* A session that began just as this CPU got going: parked again, where it was. */
        c->in_park = true;
        unprepare_release(c);
        mode = PARK_ASKED;
    }
    arch->park_end(sleep, held);
    c->depth--;
    return c->released;
}

void gdb_stop_park_detoured(struct context *saved) { park(saved, PARK_ASKED); }

struct context *gdb_stopped_context(unsigned cpu)
{
    if (cpu >= MAX_CPUS || !arch->cpu_online(cpu))
        return NULL;
    if ((int)cpu == atomic_load(&owner) && cpu == arch->this_cpu())
        return cpus[cpu].ctx;
    return atomic_load(&cpus[cpu].state) == CPU_PARKED ? cpus[cpu].ctx : NULL;
}

bool gdb_on_cpu(unsigned cpu, void (*fn)(void *arg), void *arg)
{
    if (cpu >= MAX_CPUS || !arch->cpu_online(cpu))
        return false;
    if (cpu == arch->this_cpu()) {
        fn(arg);
        return true;
    }
    struct stop_cpu *c = &cpus[cpu];
    if (atomic_load(&c->state) != CPU_PARKED || atomic_load(&c->mbox) != MBOX_IDLE)
        return false;
    c->fn = fn;
    c->arg = arg;
    atomic_store_explicit(&c->mbox, MBOX_REQUEST, memory_order_release);
    arch->wake_cpu(cpu);
    int64_t start = time_ns();
    while (atomic_load_explicit(&c->mbox, memory_order_acquire) != MBOX_DONE) {
        if (time_ns() - start > MAILBOX_WAIT_NS)
            return false; /* left REQUEST: a CPU that never answers gets no second request */
        arch->relax();
    }
    atomic_store_explicit(&c->mbox, MBOX_IDLE, memory_order_relaxed);
    return true;
}

void gdb_stop_resume(int step_cpu, bool others_stay)
{
    resume_step_cpu = step_cpu;
    resume_others_stay = others_stay;
}

/* ---- stopping and resuming the machine -------------------------------------------------------------------- */

/* Every other online CPU parks: those still running get a stop request and a stop_cpu of their own (on x86
 * not one NMI to all: a parked CPU inside an NMI handler would take a second NMI only after it resumes, and
 * find no request in it). Waits, bounded, until all have parked; one that does not is reported as not
 * stopped. After a panic the panic's own NMI has already sent them here. */
static void stop_others(unsigned me)
{
    unsigned n = arch->cpu_count();
    for (unsigned cpu = 0; cpu < n && !panicked; cpu++) {
        if (cpu == me || !arch->cpu_online(cpu) || atomic_load(&cpus[cpu].state) == CPU_PARKED)
            continue;
        atomic_store(&cpus[cpu].stop_req, true);
        arch->stop_cpu(cpu);
    }
    int64_t start = time_ns();
    for (unsigned cpu = 0; cpu < n; cpu++) {
        if (cpu == me || !arch->cpu_online(cpu))
            continue;
        while (atomic_load(&cpus[cpu].state) != CPU_PARKED && time_ns() - start < STOP_WAIT_NS)
            arch->relax();
    }
}

/* A parked CPU's (or the owner's) context as it is to run again: past a hardware breakpoint at its pc (or
 * it would match again at once), armed for a single step. A release without a step leaves the step state
 * alone: it may belong to an outer context of this CPU (one stopped again on its way out of the debugger),
 * whose trap then finds it -- stale, since a session began after it -- and gives interrupts back. */
static void prepare_release(struct stop_cpu *c, bool step)
{
    struct context *ctx = c->ctx;
    if (gdb_break_at(GDB_BREAK_HW, context_pc(ctx)))
        arch->skip_hw_break(ctx, true);
    if (!step)
        return;
    c->stepping = true;
    c->step_ctx = ctx;
    c->step_session = atomic_load(&sessions);
    c->step_masked = arch->step_begin(ctx);
}

/* The release prepared for a CPU that is held after all: its context as it was when it stopped. */
static void unprepare_release(struct stop_cpu *c)
{
    struct context *ctx = c->ctx;
    arch->skip_hw_break(ctx, false);
    if (c->stepping && c->step_ctx == ctx) {
        arch->step_end(ctx, c->step_masked);
        c->stepping = false;
        c->step_masked = false;
    }
}

/* The owner's part: stop the others, talk to gdb, release who is to run. */
static void session(unsigned me, struct context *ctx, enum stop_reason why)
{
    struct stop_cpu *c = &cpus[me];
    c->depth++;
    record(me, c, ctx);
    atomic_fetch_add(&sessions, 1);
    atomic_store(&closing, false);
    stop_others(me);
    arch->transport_irq(false);

    for (;;) {
        resume_step_cpu = -1;
        resume_others_stay = false;
        gdb_stub_session(target, transport, why, me);
        if (!panicked)
            break;
        /* After a panic nothing runs again: each resume ends in a new stop, at the same place. */
        why = GDB_STOP_PANIC;
    }

    int step = resume_step_cpu;
    bool stay = resume_others_stay;
    unsigned n = arch->cpu_count();
    atomic_store(&closing, true);
    for (unsigned cpu = 0; cpu < n; cpu++) {
        struct stop_cpu *o = &cpus[cpu];
        if (cpu == me || atomic_load(&o->state) != CPU_PARKED)
            continue;
        if (stay && (int)cpu != step)
            continue;
        prepare_release(o, (int)cpu == step);
        o->released = true;
        atomic_store(&o->state, CPU_RELEASING);
        arch->wake_cpu(cpu);
    }

    bool me_runs = !stay || step == (int)me;
    if (me_runs)
        prepare_release(c, step == (int)me);
    gdb_break_rearm(target);
    arch->transport_irq(true);
    c->depth--;
    atomic_store(&owner, -1);
    if (!me_runs)
        park(ctx, PARK_HELD); /* held while another CPU steps; that CPU's trap makes it the owner */
    arch->load_debug_regs();
}

/* This CPU becomes the owner and runs a session, or -- another CPU owns the debugger -- parks until released;
 * its event (a software breakpoint rewound, a debug-register match) happens again if it still applies. */
static void enter_locked(struct context *ctx, enum stop_reason why)
{
    unsigned me = arch->this_cpu();
    for (;;) {
        int expected = -1;
        if (atomic_compare_exchange_strong(&owner, &expected, (int)me)) {
            atomic_store(&cpus[me].stop_waiting, false); /* left by a session that is over */
            session(me, ctx, why);
            return;
        }
        if (expected == (int)me)
            return;
        /* Seen stopped by the owner's session, this CPU's event is stale when it is released: gdb heard
         * of another stop, and a breakpoint or a debug-register match fires again by itself. Not seen --
         * that session was already letting CPUs go -- it reports its event itself once the lock is free; a
         * session that starts meanwhile stops it here, with this context (gdb_stop_nmi leaves it the
         * request). */
        struct stop_cpu *c = &cpus[me];
        atomic_store(&c->stop_waiting, false); /* this session sees it parked; no request left over */
        bool seen = park(ctx, PARK_LOSER);
        while (!seen && atomic_load(&owner) >= 0) {
            if (atomic_exchange(&c->stop_waiting, false))
                seen = park(ctx, PARK_ASKED);
            else
                arch->relax();
        }
        if (seen)
            return;
        if ((why == GDB_STOP_SW_BREAK && !gdb_break_at(GDB_BREAK_SW, context_pc(ctx))) ||
            (why == GDB_STOP_HW_BREAK && !gdb_break_at(GDB_BREAK_HW, context_pc(ctx))))
            return; /* removed meanwhile: the instruction just runs */
    }
}

/* Any stop of this CPU's own. Until it is back on its way out (trapping), a stop request from another CPU's
 * session -- while it waits for the debugger's lock, or once its own session has let go of it -- is left to
 * it (gdb_stop_nmi), so that it parks with this context, not one inside the debugger. */
static void enter(struct context *ctx, enum stop_reason why)
{
    struct stop_cpu *c = &cpus[arch->this_cpu()];
    c->trapping = true;
    enter_locked(ctx, why);
    c->trapping = false;
    if (atomic_exchange(&c->stop_waiting, false))
        park(ctx, PARK_ASKED); /* a session that began as this CPU was leaving */
}

bool gdb_stop_breakpoint_insn(struct context *ctx, uint64_t addr)
{
    if (!enabled)
        return false;
    struct stop_cpu *c = &cpus[arch->this_cpu()];
    enum stop_reason why = GDB_STOP_TRAP;
    if (c->trap_pending) {
        c->trap_pending = false;
        why = c->trap_why;
    } else if (gdb_break_at(GDB_BREAK_SW, addr)) {
        arch->set_pc(ctx, addr); /* the breakpoint's instruction runs once its byte is back */
        why = GDB_STOP_SW_BREAK;
        if (c->depth) {
            /* The debugger's own code (a parked CPU's mailbox work, the stub) ran into it: it cannot stop
             * here, so the breakpoint steps aside until the machine resumes. */
            gdb_break_suspend(target, addr);
            return true;
        }
    } else if (c->depth) {
        return true;
    } else if (!arch->break_insn_at(addr)) {
        /* A breakpoint instruction that is gone: a breakpoint removed while this CPU was on its way here.
         * The instruction it stood for runs now. */
        arch->set_pc(ctx, addr);
        return true;
    }
    /* Anything else is a breakpoint instruction compiled into the kernel: a stop after it. */
    enter(ctx, why);
    return true;
}

bool gdb_stop_debug_trap(struct context *ctx, bool stepped, bool hw_hit)
{
    if (!enabled)
        return false;
    struct stop_cpu *c = &cpus[arch->this_cpu()];
    enum stop_reason why = GDB_STOP_TRAP;
    if (stepped) {
        /* The debugger's step: disarmed, interrupts as they were. gdb waits for it unless a session began
         * since (another stop overtook it); a step trap that is no step of the debugger's is dropped too. */
        bool current = c->stepping && c->step_session == atomic_load(&sessions);
        arch->step_end(ctx, c->stepping && c->step_masked);
        c->stepping = false;
        c->step_masked = false;
        if (!hw_hit && (!current || c->depth))
            return true;
        why = GDB_STOP_STEP;
    }
    if (hw_hit) {
        why = GDB_STOP_HW_BREAK;
        if (!gdb_break_at(GDB_BREAK_HW, context_pc(ctx)) && !stepped) {
            arch->skip_hw_break(ctx, true); /* removed while this CPU was on its way here */
            return true;
        }
    }
    if (c->depth) {
        arch->skip_hw_break(ctx, true); /* a hardware breakpoint in the debugger's own path: passed over */
        return true;
    }
    enter(ctx, why);
    return true;
}

bool gdb_stop_nmi(struct context *ctx)
{
    if (!enabled)
        return false;
    struct stop_cpu *c = &cpus[arch->this_cpu()];
    if (!atomic_exchange(&c->stop_req, false))
        return false;
    /* A request whose session is over, or one that found this CPU parked already (it stopped on a
     * breakpoint of its own while the owner was asking): nothing more to do. */
    if (atomic_load(&owner) < 0 || atomic_load(&c->state) == CPU_PARKED)
        return true;
    /* On its way into the debugger with a stop of its own (enter()): it parks there, with that stop's
     * context, rather than here with one inside the debugger's code. */
    if (c->trapping && !c->in_park) {
        atomic_store(&c->stop_waiting, true);
        return true;
    }
    /* In park(): on its way out after the last release, it stays parked where it was; just arriving, or
     * already past its release, it parks (again) before leaving park(). */
    if (c->in_park) {
        int releasing = CPU_RELEASING;
        if (!atomic_compare_exchange_strong(&c->state, &releasing, CPU_PARKED))
            atomic_store(&c->stop_waiting, true);
        return true;
    }
    if (!arch->leave_nmi(ctx))
        park(ctx, PARK_ASKED);
    return true;
}

void gdb_panic_park(struct context *ctx)
{
    if (!enabled || !stop_on_panic)
        return;
    struct stop_cpu *c = &cpus[arch->this_cpu()];
    atomic_store(&c->stop_req, false);
    for (;;)
        park(ctx, PARK_HELD);
}

void gdb_request_stop(bool interrupt)
{
    irq_stop_reason = interrupt ? GDB_STOP_INTERRUPT : GDB_STOP_ATTACH;
    atomic_store(&irq_stop_pending, true);
}

void gdb_after_irq(struct context *ctx)
{
    if (!atomic_load_explicit(&irq_stop_pending, memory_order_relaxed))
        return;
    atomic_store(&irq_stop_pending, false);
    enter(ctx, irq_stop_reason);
}

/* The debugger's own stop at this point of the kernel: a breakpoint instruction gdb_stop_breakpoint_insn
 * recognises, so that the session sees a real interrupted context (the trap's registers). */
static void trap(enum stop_reason why)
{
    struct stop_cpu *c = &cpus[arch->this_cpu()];
    c->trap_why = why;
    c->trap_pending = true;
    arch->trap();
}

void gdb_stop_wait_for_gdb(void)
{
    if (enabled)
        trap(GDB_STOP_ATTACH);
}

/* Returns only when the debugger is off or not asked to take panics; the panicking CPU otherwise stays in
 * sessions for good (each resume ends in a new stop) -- the caller halts after the return regardless. */
void gdb_panic_enter(const struct context *ctx)
{
    if (!enabled || !stop_on_panic)
        return;
    unsigned me = arch->this_cpu();
    /* Panicking inside a session on this CPU: the debugger itself broke, nothing to hand over to. Another
     * CPU's session is over: the panic's NMI parked that CPU. */
    if (atomic_exchange(&owner, (int)me) == (int)me)
        return;
    panicked = true;
    if (ctx) {
        session(me, (struct context *)ctx, GDB_STOP_PANIC);
    } else {
        atomic_store(&owner, -1);
        trap(GDB_STOP_PANIC);
    }
}
