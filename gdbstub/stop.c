/* gdbstub/stop.c: the stop/resume state machine of every CPU (gdbstub/stop.h), arch-neutral.
 *
 * Stopping. Whatever stops the machine ends in enter() on one CPU, which becomes the leader (the owner) by
 * winning `stop_owner`. It asks every other running CPU to stop (its stop_req flag, then arch->stop_cpu, an
 * NMI on x86) and waits until each has parked: saved a pointer to its interrupted context and stopped in
 * park(). A CPU stopped that way parks outside NMI context if the arch can send it there (leave_nmi), so
 * that it can sleep and be woken by an ordinary interrupt; a CPU that hits a trap of its own while another
 * CPU leads parks as that session's (its event is not lost: a software breakpoint is rewound and fires
 * again once released, if still there). Then the leader runs the protocol (gdb_stub_session).
 *
 * Resuming. The stub's resume() only records the choice; when the session returns the leader releases the
 * parked CPUs that are to run (state PARKED -> RELEASING, then a wake-up; each loads the debug registers
 * itself and goes back to RUNNING), clears `stop_owner` and returns into its own context, or -- stepping or
 * running another CPU with the rest held (vCont;s:N, vCont;c:N) -- parks itself, and the next stop of that CPU
 * makes it the next leader; the transport's interrupt then goes to the CPU that runs. A
 * new session may begin while CPUs of the last one are still leaving: gdb_stop_nmi() puts those back where
 * they were, and a CPU that reaches the debugger's lock as a session closes waits for it and reports its own
 * stop.
 *
 * What a stopped CPU does -- parks, serves the leader's mailbox, answers a stop request, leaves -- is
 * gdbstub/park.c's; this file is the leader's side and the ways in. What the two share is in
 * gdbstub/stop_cpu.h. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/breakpoints.h"
#include "gdbstub/stop.h"
#include "gdbstub/stop_cpu.h"
#include "gdbstub/stub.h"
#include "hal/context.h"
#include "hal/cpu.h"
#include "hal/debug.h"

/* How long the leader waits for a CPU to park. Generous: under TCG four vCPUs share fewer host cores, and a
 * CPU may be in a long NMI handler. */
#define STOP_WAIT_NS (2000 * 1000000ll)

struct stop_cpu stop_cpus[MAX_CPUS];
atomic_int stop_owner = -1;
atomic_bool stop_closing = true;
atomic_uint stop_sessions;
/* time_ns() when the session in progress had stopped every CPU: what a debugger measures the paused machine's
 * waits against (scripts/prof_tasks.py), since the clock runs on while the stub holds it. */
int64_t stop_time_ns;
bool stop_enabled;
bool stop_on_panic;
const struct gdb_arch_ops *stop_arch;
static atomic_bool irq_stop_pending;    /* the transport saw gdb: enter at the end of this interrupt */
static enum stop_reason irq_stop_reason;
static const struct gdb_transport *irq_stop_transport;
/* The transport the next session runs on, when a transport's own stop asked for it (NULL: the last one's). */
static const struct gdb_transport *_Atomic requested_transport;
static bool panicked;                   /* a panic handed the machine to the debugger: nobody runs again */
static const struct gdb_target *target;
static const struct gdb_transport *transport; /* the last session's: gdb waits on it for a stop reply */

/* The stub's choice for the end of the session (gdb_stop_resume()). */
static int resume_cpu;
static bool resume_step;
static bool resume_others_stay;

void gdb_stop_init(const struct gdb_arch_ops *ops, const struct gdb_target *t, const struct gdb_transport *tr,
                   bool panic_stops)
{
    for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
        struct stop_cpu *c = &stop_cpus[cpu];
        atomic_store(&c->state, CPU_RUNNING);
        atomic_store(&c->claim, CLAIM_NONE);
        atomic_store(&c->stop_req, false);
        atomic_store(&c->stop_waiting, false);
        atomic_store(&c->mbox, MBOX_IDLE);
        c->depth = 0;
        c->ctx = NULL;
        c->stepping = c->step_masked = c->trap_pending = c->in_park = c->released = c->trapping = false;
        c->step_ctx = NULL;
    }
    atomic_store(&stop_owner, -1);
    atomic_store(&stop_closing, true);
    atomic_store(&stop_sessions, 0);
    atomic_store(&irq_stop_pending, false);
    irq_stop_transport = NULL;
    atomic_store(&requested_transport, NULL);
    panicked = false;
    stop_arch = ops;
    target = t;
    transport = tr;
    stop_on_panic = panic_stops;
    stop_enabled = true;
}

bool gdb_stop_enabled(void) { return stop_enabled; }
bool gdb_stop_panicked(void) { return panicked; }

void gdb_stop_resume(int cpu, bool step, bool others_stay)
{
    resume_cpu = cpu;
    resume_step = step && cpu >= 0;
    resume_others_stay = others_stay && cpu >= 0;
}

/* ---- stopping and resuming the machine -------------------------------------------------------------------- */

/* A parked CPU this session may count on: parked, and claimed by a session (now, or one before that held it)
 * rather than on its way out by itself. */
static bool parked_and_claimed(struct stop_cpu *o)
{
    if (atomic_load(&o->state) != CPU_PARKED)
        return false;
    int none = CLAIM_NONE;
    return atomic_compare_exchange_strong(&o->claim, &none, CLAIM_OWNER) || none == CLAIM_OWNER;
}

/* Every other online CPU parks: those still running get a stop request and a stop_cpu of their own (on x86
 * not one NMI to all: a parked CPU inside an NMI handler would take a second NMI only after it resumes, and
 * find no request in it). Waits, bounded, until all have parked; one that does not is reported as not
 * stopped. After a panic the panic's own NMI has already sent them here. */
static void stop_others(unsigned me)
{
    unsigned n = stop_arch->cpu_count();
    for (unsigned cpu = 0; cpu < n && !panicked; cpu++) {
        if (cpu == me || !stop_arch->cpu_online(cpu) || parked_and_claimed(&stop_cpus[cpu]))
            continue;
        atomic_store(&stop_cpus[cpu].stop_req, true);
        stop_arch->stop_cpu(cpu);
    }
    int64_t start = time_ns();
    for (unsigned cpu = 0; cpu < n; cpu++) {
        if (cpu == me || !stop_arch->cpu_online(cpu))
            continue;
        while (!parked_and_claimed(&stop_cpus[cpu]) && time_ns() - start < STOP_WAIT_NS)
            stop_arch->relax();
    }
}
/* The owner's part: stop the others, talk to gdb, release who is to run. */
static void session(unsigned me, struct context *ctx, enum stop_reason why)
{
    struct stop_cpu *c = &stop_cpus[me];
    c->depth++;
    stop_record(me, c, ctx);
    atomic_fetch_add(&stop_sessions, 1);
    atomic_store(&stop_closing, false);
    stop_others(me);
    stop_time_ns = time_ns();
    stop_arch->transport_irq(false, -1);
    /* A stop the transport asked for whose CPU this stop caught before its gdb_after_irq (gdb's Ctrl-C as a
     * breakpoint hit elsewhere) is answered by this one: taken here, or that CPU would stop the machine again
     * as soon as gdb resumed it, with a stop reply nobody waits for. */
    if (atomic_exchange(&irq_stop_pending, false) && irq_stop_transport)
        atomic_store(&requested_transport, irq_stop_transport);
    /* A stop the transport asked for (gdb attaching or sending Ctrl-C) talks on that transport; any other
     * (a breakpoint, a step) on the one gdb last used, which waits there for the stop reply. */
    const struct gdb_transport *asked = atomic_exchange(&requested_transport, NULL);
    if (asked)
        transport = asked;
    gdb_break_note_watch_hit(why == GDB_STOP_WATCH && c->watch_pending ? &c->watch : 0);
    c->watch_pending = false;

    for (;;) {
        resume_cpu = -1;
        resume_step = false;
        resume_others_stay = false;
        if (transport->session)
            transport->session(transport->ctx, true, false);
        enum gdb_session_end end = gdb_stub_session(target, transport, why, me);
        if (transport->session)
            transport->session(transport->ctx, false,
                               end == GDB_END_DETACH || end == GDB_END_KILL || end == GDB_END_LINK_LOST);
        if (!panicked)
            break;
        /* After a panic nothing runs again: each resume ends in a new stop, at the same place. */
        why = GDB_STOP_PANIC;
    }

    int only = resume_cpu; /* the one CPU that runs or steps, when others stay; the one stepping else */
    bool step = resume_step;
    bool stay = resume_others_stay;
    unsigned n = stop_arch->cpu_count();
    atomic_store(&stop_closing, true);
    for (unsigned cpu = 0; cpu < n; cpu++) {
        struct stop_cpu *o = &stop_cpus[cpu];
        if (cpu == me || atomic_load(&o->state) != CPU_PARKED)
            continue;
        if (stay && (int)cpu != only)
            continue;
        stop_prepare_release(o, step && (int)cpu == only);
        o->released = true;
        atomic_store(&o->state, CPU_RELEASING);
        stop_arch->wake_cpu(cpu);
    }

    bool me_runs = !stay || only == (int)me;
    if (me_runs)
        stop_prepare_release(c, step && only == (int)me);
    gdb_break_rearm(target);
    /* Only the CPUs that run can take the transport's interrupt (a parked one holds device interrupts
     * back): with the others held, it goes to the one that runs, or gdb's Ctrl-C would never be seen. */
    stop_arch->transport_irq(true, stay ? only : -1);
    c->depth--;
    atomic_store(&stop_owner, -1);
    if (!me_runs)
        park(ctx, PARK_HELD); /* held while another CPU runs alone; a stop of that CPU makes it the owner */
    stop_arch->load_debug_regs();
}

/* Whether a stop this CPU decided on when `stop_sessions` was `since` is still one to report, judged once it
 * owns the debugger or the lock is free (nothing changes the table then but an owner). Between deciding and
 * enter() a stop request can park the CPU, and sessions run and resume the machine meanwhile: a breakpoint
 * they removed has its instruction back, which just runs; a step is answered by the stop those sessions
 * reported; a watchpoint they removed is forgotten. Left unchecked, the CPU stopped the machine for a
 * breakpoint gdb had deleted, with a stop reply gdb did not expect. */
static bool still_current(struct stop_cpu *c, const struct context *ctx, enum stop_reason why, unsigned since)
{
    bool overtaken = atomic_load(&stop_sessions) != since;
    switch (why) {
    case GDB_STOP_SW_BREAK:
        return gdb_break_at(GDB_BREAK_SW, context_pc(ctx));
    case GDB_STOP_HW_BREAK:
        return gdb_break_at(GDB_BREAK_HW, context_pc(ctx));
    case GDB_STOP_STEP:
        return !overtaken;
    case GDB_STOP_WATCH:
        if (overtaken && !gdb_break_at(c->watch.type, c->watch.addr))
            c->watch_pending = false;
        return c->watch_pending;
    default:
        return true;
    }
}

/* This CPU becomes the owner and runs a session, or -- another CPU owns the debugger -- parks until released;
 * its event (a software breakpoint rewound, a debug-register match) happens again if it still applies. */
static void enter_locked(struct context *ctx, enum stop_reason why, unsigned since)
{
    unsigned me = stop_arch->this_cpu();
    struct stop_cpu *c = &stop_cpus[me];
    for (;;) {
        int expected = -1;
        if (atomic_compare_exchange_strong(&stop_owner, &expected, (int)me)) {
            atomic_store(&c->stop_waiting, false); /* left by a session that is over */
            if (!still_current(c, ctx, why, since)) {
                int mine = (int)me; /* a panic may have taken the lock from under it */
                atomic_compare_exchange_strong(&stop_owner, &mine, -1);
                return;
            }
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
        atomic_store(&c->stop_waiting, false); /* this session sees it parked; no request left over */
        bool seen = park(ctx, PARK_LOSER);
        while (!seen && atomic_load(&stop_owner) >= 0) {
            if (atomic_exchange(&c->stop_waiting, false))
                seen = park(ctx, PARK_ASKED);
            else
                stop_arch->relax();
        }
        if (seen || !still_current(c, ctx, why, since))
            return;
    }
}

/* Any stop of this CPU's own. Until it is back on its way out (trapping), a stop request from another CPU's
 * session -- while it waits for the debugger's lock, or once its own session has let go of it -- is left to
 * it (gdb_stop_nmi), so that it parks with this context, not one inside the debugger. */
static void enter(struct context *ctx, enum stop_reason why, unsigned since)
{
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    c->trapping = true;
    enter_locked(ctx, why, since);
    c->trapping = false;
    if (atomic_exchange(&c->stop_waiting, false))
        park(ctx, PARK_ASKED); /* a session that began as this CPU was leaving */
}

bool gdb_stop_breakpoint_insn(struct context *ctx, uint64_t addr)
{
    if (!stop_enabled)
        return false;
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    unsigned since = atomic_load(&stop_sessions); /* before deciding: see still_current() */
    enum stop_reason why = GDB_STOP_TRAP;
    if (c->trap_pending) {
        c->trap_pending = false;
        why = c->trap_why;
    } else if (gdb_break_at(GDB_BREAK_SW, addr)) {
        stop_arch->set_pc(ctx, addr); /* the breakpoint's instruction runs once its byte is back */
        why = GDB_STOP_SW_BREAK;
        if (c->depth) {
            /* The debugger's own code (a parked CPU's mailbox work, the stub) ran into it: it cannot stop
             * here, so the breakpoint steps aside until the machine resumes. */
            gdb_break_suspend(target, addr);
            return true;
        }
    } else if (c->depth) {
        return true;
    } else if (!stop_arch->break_insn_at(addr)) {
        /* A breakpoint instruction that is gone: a breakpoint removed while this CPU was on its way here.
         * The instruction it stood for runs now. */
        stop_arch->set_pc(ctx, addr);
        return true;
    }
    /* Anything else is a breakpoint instruction compiled into the kernel: a stop after it. */
    enter(ctx, why, since);
    return true;
}

/* The watchpoint among the matched slots, if one is: a data match has no pc to check, only the table. */
static bool watch_among(unsigned hits, struct gdb_hw_slot *out)
{
    for (unsigned slot = 0; slot < target->hw_break_slots; slot++)
        if ((hits & (1u << slot)) && gdb_break_hw_slot(slot, out) && out->type != GDB_BREAK_HW)
            return true;
    return false;
}

bool gdb_stop_debug_trap(struct context *ctx, bool stepped, unsigned hits)
{
    if (!stop_enabled)
        return false;
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    unsigned since = atomic_load(&stop_sessions); /* before deciding: see still_current() */
    enum stop_reason why = GDB_STOP_TRAP;
    bool current = false;
    struct gdb_hw_slot watch;
    bool watched = hits && watch_among(hits, &watch);
    bool hw_hit = hits && !watched;
    if (stepped) {
        /* The debugger's step: disarmed, interrupts as they were. gdb waits for it unless a session began
         * since (another stop overtook it); a step trap that is no step of the debugger's is dropped too. */
        current = c->stepping && c->step_session == atomic_load(&stop_sessions);
        stop_arch->step_end(ctx, c->stepping && c->step_masked);
        c->stepping = false;
        c->step_masked = false;
        if (!hits && (!current || c->depth))
            return true;
        why = GDB_STOP_STEP;
    }
    if (watched) {
        /* The access is done (a data match traps after the instruction): nothing to pass over on resume. A
         * match inside the debugger's own path, which cannot stop there, is dropped. */
        if (c->depth)
            return true;
        c->watch = watch;
        c->watch_pending = true;
        enter(ctx, GDB_STOP_WATCH, since);
        return true;
    }
    if (hw_hit) {
        why = GDB_STOP_HW_BREAK;
        if (!gdb_break_at(GDB_BREAK_HW, context_pc(ctx))) {
            /* Removed while this CPU was on its way here: passed over, and a stale step with it (it used
             * to stop the machine for a breakpoint gdb had deleted, with nobody attached). */
            stop_arch->skip_hw_break(ctx, true);
            if (!stepped || !current)
                return true;
            why = GDB_STOP_STEP;
        }
    }
    if (c->depth) {
        stop_arch->skip_hw_break(ctx, true); /* a hardware breakpoint in the debugger's own path: passed over */
        return true;
    }
    enter(ctx, why, since);
    return true;
}
void gdb_request_stop(const struct gdb_transport *tr, bool interrupt)
{
    irq_stop_reason = interrupt ? GDB_STOP_INTERRUPT : GDB_STOP_ATTACH;
    irq_stop_transport = tr;
    atomic_store(&irq_stop_pending, true);
}

void gdb_after_irq(struct context *ctx)
{
    if (!atomic_load_explicit(&irq_stop_pending, memory_order_relaxed))
        return;
    atomic_store(&irq_stop_pending, false);
    if (irq_stop_transport)
        atomic_store(&requested_transport, irq_stop_transport);
    enter(ctx, irq_stop_reason, atomic_load(&stop_sessions));
}

/* The debugger's own stop at this point of the kernel: a breakpoint instruction gdb_stop_breakpoint_insn
 * recognises, so that the session sees a real interrupted context (the trap's registers). */
static void trap(enum stop_reason why)
{
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    c->trap_why = why;
    c->trap_pending = true;
    stop_arch->trap();
}

void gdb_stop_wait_for_gdb(void)
{
    if (stop_enabled)
        trap(GDB_STOP_ATTACH);
}

void gdb_stop_for_transport(const struct gdb_transport *tr, bool interrupt)
{
    if (!stop_enabled)
        return;
    atomic_store(&requested_transport, tr);
    trap(interrupt ? GDB_STOP_INTERRUPT : GDB_STOP_ATTACH);
}

/* Returns only when the debugger is off or not asked to take panics; the panicking CPU otherwise stays in
 * sessions for good (each resume ends in a new stop) -- the caller halts after the return regardless. */
void gdb_panic_enter(const struct context *ctx)
{
    if (!stop_enabled || !stop_on_panic)
        return;
    unsigned me = stop_arch->this_cpu();
    /* Panicking inside a session on this CPU: the debugger itself broke, nothing to hand over to. Another
     * CPU's session is over: the panic's NMI parked that CPU. */
    if (atomic_exchange(&stop_owner, (int)me) == (int)me)
        return;
    panicked = true;
    if (ctx) {
        session(me, (struct context *)ctx, GDB_STOP_PANIC);
    } else {
        atomic_store(&stop_owner, -1);
        trap(GDB_STOP_PANIC);
    }
}
