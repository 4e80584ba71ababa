/* gdbstub/park.c: a CPU stopped for the debugger, the other half of the state machine in gdbstub/stop.c (whose
 * comment tells the whole story; gdbstub/stop_cpu.h holds what the two share). It owns everything a CPU does
 * between stopping and running again: parking with its context saved; serving the leader's mailbox (MSRs and
 * the local APIC are per CPU, so the leader posts a function, and the parked CPU runs it on itself and says it
 * is done); answering a stop request (gdb_stop_nmi) or a panic's NMI; and the release of its context (past a
 * hardware breakpoint, armed for a step), undone when it is held after all. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/breakpoints.h"
#include "gdbstub/stop.h"
#include "gdbstub/stop_cpu.h"
#include "hal/context.h"
#include "hal/cpu.h"

/* How long the leader waits for a parked CPU to answer the mailbox. Generous: under TCG four vCPUs share fewer
 * host cores, and a CPU may be in a long NMI handler. */
#define MAILBOX_WAIT_NS (1000 * 1000000ll)

/* ---- parked CPUs and their mailbox ------------------------------------------------------------------------ */

static void mailbox_serve(struct stop_cpu *c)
{
    if (atomic_load_explicit(&c->mbox, memory_order_acquire) != MBOX_REQUEST)
        return;
    c->fn(c->arg);
    atomic_store_explicit(&c->mbox, MBOX_DONE, memory_order_release);
}

void stop_record(unsigned me, struct stop_cpu *c, struct context *ctx)
{
    c->ctx = ctx;
    stop_arch->save_cpu_state(me, ctx);
}

/* Stopped: context saved, serving the mailbox, until the owner moves this CPU to RELEASING. False when it
 * left by itself, unseen by any session (see enum park_mode). */
static bool park_once(struct context *ctx, enum park_mode mode)
{
    unsigned me = stop_arch->this_cpu();
    struct stop_cpu *c = &stop_cpus[me];
    c->in_park = true; /* from here on gdb_stop_nmi() leaves a stop request to this function */
    c->depth++;
    stop_record(me, c, ctx);
    uint64_t held; /* what park_begin holds back, in this frame: parks can nest */
    bool sleep = stop_arch->park_begin(&held);
    c->released = false;
    for (;;) {
        atomic_store(&c->claim, CLAIM_NONE); /* not parked until the next line: no session has counted it */
        atomic_store(&c->state, CPU_PARKED);
        atomic_store(&c->stop_waiting, false); /* parked: any session now sees it so */
        /* Sequentially consistent with the owner's store to `stop_closing` and its load of this state: one of
         * the two sees the other, so a CPU is either released by the owner or leaves here by itself. And a
         * new session that saw it parked after it read `stop_closing` (still the last session's) has claimed it
         * first, or finds it leaving and asks it to stop (stop_others). */
        if (mode != PARK_HELD && (atomic_load(&stop_closing) || atomic_load(&stop_owner) < 0)) {
            int none = CLAIM_NONE, parked = CPU_PARKED;
            if (atomic_compare_exchange_strong(&c->claim, &none, CLAIM_LEAVING))
                atomic_compare_exchange_strong(&c->state, &parked, CPU_RELEASING);
        }
        for (;;) {
            for (unsigned polls = 0; atomic_load(&c->state) == CPU_PARKED; polls++) {
                mailbox_serve(c);
                if (atomic_load(&c->state) == CPU_PARKED && atomic_load(&c->mbox) != MBOX_REQUEST)
                    stop_arch->park_idle(sleep, polls);
            }
            stop_arch->load_debug_regs();
            int releasing = CPU_RELEASING;
            if (atomic_compare_exchange_strong(&c->state, &releasing, CPU_RUNNING))
                break;
            /* A new session's stop request came while this CPU was leaving (gdb_stop_nmi put it back to
             * PARKED): it stays, with the same context, and what the last release prepared is undone. Left by
             * itself, it is no longer leaving: that session may claim it now. */
            stop_unprepare_release(c);
            int leaving = CLAIM_LEAVING;
            atomic_compare_exchange_strong(&c->claim, &leaving, CLAIM_NONE);
        }
        c->in_park = false;
        if (!atomic_exchange(&c->stop_waiting, false))
            break;
        /* A session that began just as this CPU got going: parked again, where it was. */
        c->in_park = true;
        stop_unprepare_release(c);
        mode = PARK_ASKED;
    }
    stop_arch->park_end(sleep, held);
    c->depth--;
    return c->released;
}

/* park_once, again with the same context while a stop request came as it was leaving -- after its last look
 * at stop_waiting, with this CPU still inside the debugger (depth > 0): parked there, its context would be
 * the debugger's own code, where a step is never reported (gdb_stop_debug_trap) and stepi hung. */
bool park(struct context *ctx, enum park_mode mode)
{
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    bool seen = park_once(ctx, mode);
    while (atomic_exchange(&c->stop_waiting, false)) {
        stop_unprepare_release(c);
        seen = park_once(ctx, PARK_ASKED);
    }
    return seen;
}

void gdb_stop_park_detoured(struct context *saved) { park(saved, PARK_ASKED); }

struct context *gdb_stopped_context(unsigned cpu)
{
    if (cpu >= MAX_CPUS || !stop_arch->cpu_online(cpu))
        return NULL;
    if ((int)cpu == atomic_load(&stop_owner) && cpu == stop_arch->this_cpu())
        return stop_cpus[cpu].ctx;
    return atomic_load(&stop_cpus[cpu].state) == CPU_PARKED ? stop_cpus[cpu].ctx : NULL;
}

bool gdb_on_cpu(unsigned cpu, void (*fn)(void *arg), void *arg)
{
    if (cpu >= MAX_CPUS || !stop_arch->cpu_online(cpu))
        return false;
    if (cpu == stop_arch->this_cpu()) {
        fn(arg);
        return true;
    }
    struct stop_cpu *c = &stop_cpus[cpu];
    if (atomic_load(&c->state) != CPU_PARKED || atomic_load(&c->mbox) != MBOX_IDLE)
        return false;
    c->fn = fn;
    c->arg = arg;
    atomic_store_explicit(&c->mbox, MBOX_REQUEST, memory_order_release);
    stop_arch->wake_cpu(cpu);
    int64_t start = time_ns();
    while (atomic_load_explicit(&c->mbox, memory_order_acquire) != MBOX_DONE) {
        if (time_ns() - start > MAILBOX_WAIT_NS)
            return false; /* left REQUEST: a CPU that never answers gets no second request */
        stop_arch->relax();
    }
    atomic_store_explicit(&c->mbox, MBOX_IDLE, memory_order_relaxed);
    return true;
}

/* ---- leaving: the release of a stopped CPU's context ------------------------------------------------------ */

/* A parked CPU's (or the owner's) context as it is to run again: past a hardware breakpoint at its pc (or
 * it would match again at once), armed for a single step. A release without a step leaves the step state
 * alone: it may belong to an outer context of this CPU (one stopped again on its way out of the debugger),
 * whose trap then finds it -- stale, since a session began after it -- and gives interrupts back. */
void stop_prepare_release(struct stop_cpu *c, bool step)
{
    struct context *ctx = c->ctx;
    if (gdb_break_at(GDB_BREAK_HW, context_pc(ctx)))
        stop_arch->skip_hw_break(ctx, true);
    if (!step)
        return;
    c->stepping = true;
    c->step_ctx = ctx;
    c->step_session = atomic_load(&stop_sessions);
    c->step_masked = stop_arch->step_begin(ctx);
}

/* The release prepared for a CPU that is held after all: its context as it was when it stopped. */
void stop_unprepare_release(struct stop_cpu *c)
{
    struct context *ctx = c->ctx;
    stop_arch->skip_hw_break(ctx, false);
    if (c->stepping && c->step_ctx == ctx) {
        stop_arch->step_end(ctx, c->step_masked);
        c->stepping = false;
        c->step_masked = false;
    }
}

/* ---- a stop request, and a panic's ----------------------------------------------------------------------- */

bool gdb_stop_nmi(struct context *ctx)
{
    if (!stop_enabled)
        return false;
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    if (!atomic_exchange(&c->stop_req, false))
        return false;
    /* A request whose session is over, or one that found this CPU parked already (it stopped on a
     * breakpoint of its own while the owner was asking): nothing more to do -- unless it is parked only
     * on its way out by itself (CLAIM_LEAVING, about to leave): then it parks again, below. */
    if (atomic_load(&stop_owner) < 0 ||
        (atomic_load(&c->state) == CPU_PARKED && atomic_load(&c->claim) != CLAIM_LEAVING))
        return true;
    /* On its way into the debugger with a stop of its own (enter()), or on its way out of a park (inside
     * the debugger, past park's last look): it parks there, with the context it stopped with, rather than
     * here with one inside the debugger's code. */
    if ((c->trapping || c->depth > 0) && !c->in_park) {
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
    if (!stop_arch->leave_nmi(ctx))
        park(ctx, PARK_ASKED);
    return true;
}

void gdb_panic_park(struct context *ctx)
{
    if (!stop_enabled || !stop_on_panic)
        return;
    struct stop_cpu *c = &stop_cpus[stop_arch->this_cpu()];
    atomic_store(&c->stop_req, false);
    for (;;)
        park(ctx, PARK_HELD);
}
