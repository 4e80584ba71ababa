/* kernel/profiler/tick_lateness.c: a late tick's account and weight (kernel/profiler/tick_lateness.h): out of
 * line, as a punctual tick -- nearly every one -- never comes here. */
#include "kernel/profiler/tick_lateness.h"

#include "kernel/profiler_ring.h"

struct tick_lateness tick_late(struct profiler_cpu_run *c, const struct context *ctx, int64_t held,
                               const struct tick_schedule *s)
{
    struct tick_lateness late = { 0, 0, s->weight };
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
