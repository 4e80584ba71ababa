/* kernel/profiler/tick_lateness.c: a sampling tick's lateness and weight (kernel/profiler/tick_lateness.h). */
#include "kernel/profiler/tick_lateness.h"

#include "kernel/profiler_ring.h"

/* How long after the tick it stands for was due: its own delay, plus whole periods missed since the previous
 * tick (ticks coalesce while held off). The LAPIC timer is periodic, so the tick after one due at last_due_ns
 * is due a period later; now is the sample's own clock reading, so this costs no read of the timer. A tick that
 * comes earlier than that, or under an eighth of a period late, is taken as due now: the schedule follows the
 * timer, and the timer's and the clock's calibrations (both against the PIT) cannot drift apart by more than a
 * tick's rounding before the next punctual tick catches them up. */
static int64_t held_since_due(struct profiler_cpu_run *c, int64_t now, int64_t period)
{
    int64_t held = now - (c->last_due_ns + period);
    if (held < period / 8) {
        c->last_due_ns = now;
        return held > 0 ? held : 0;
    }
    c->last_due_ns = now - held % period; /* the latest tick due by now is the one taken */
    return held;
}

struct tick_lateness tick_lateness(struct profiler_cpu_run *c, const struct context *ctx, int64_t now,
                                   bool starts_schedule, const struct tick_schedule *s)
{
    struct tick_lateness late = { 0, 0, s->weight };
    int64_t held = 0;
    if (starts_schedule)
        c->last_due_ns = now;
    else
        held = held_since_due(c, now, s->period_ns);
    if (held <= s->period_ns / 2)
        return late;
    c->late_ticks++;
    uintptr_t pc = context_pc(ctx);
    if (!(pc >= s->text->lo + 2 && pc < s->text->hi && irq_enable_before(pc))) {
        c->late_elsewhere_ns += (uint64_t)held;
        return late; /* the CPU was taken away: who ran meanwhile is unknown, so it weighs one tick */
    }
    c->let_in_ticks++;
    c->held_off_ns += (uint64_t)held;
    c->let_in_pc = pc;
    uint64_t us = (uint64_t)held / 1000;
    late.flags = PROFILE_REC_LET_IN;
    late.held_off_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    /* Let in by code re-enabling interrupts, it stands for every tick that coalesced while they were off -- its
     * own and one per whole period it was held -- so that code weighs the CPU time it took, not one tick. */
    uint64_t weight = (uint64_t)s->weight * (1 + (uint64_t)held / (uint64_t)s->period_ns);
    late.weight = weight > UINT32_MAX ? UINT32_MAX : (uint32_t)weight;
    return late;
}
