/* kernel/profiler/tick_lateness.h: a sampling tick's lateness on its CPU's periodic schedule -- whether
 * interrupts-off code held it off (it lands just after the sti or popf that let it in) or the CPU was taken
 * away (late anywhere else), the CPU's account of both, and what the tick's sample weighs. Called from the tick
 * (kernel/profiler.c's tick_in_run): interrupt context, no lock, no allocation, no printing. */
#ifndef KERNEL_PROFILER_TICK_LATENESS_H
#define KERNEL_PROFILER_TICK_LATENESS_H

#include <stdbool.h>
#include <stdint.h>
#include "hal/context.h"
#include "kernel/profiler.h"
#include "kernel/stacktrace.h"

/* The run's tick: its period, what one punctual tick's sample weighs (its period in the run's unit), and the
 * kernel's text (where a let-in site can be). */
struct tick_schedule {
    int64_t period_ns;
    uint32_t weight;
    const struct text_bounds *text;
};

/* What a tick's sample carries for its lateness. */
struct tick_lateness {
    uint8_t flags;        /* PROFILE_REC_LET_IN for a tick held off by interrupts-off code, else 0 */
    uint32_t held_off_us; /* for a let-in tick: how long it was held off */
    uint32_t weight;      /* the sample's period: the ticks it stands for, in the run's unit */
};

/* A sampling tick taken at now on the CPU whose account is c: how long after the tick it stands for was due --
 * its own delay, plus whole periods missed since the previous tick (ticks coalesce while held off). Inline: every
 * sampling tick asks. The LAPIC timer is periodic, so the tick after one due at last_due_ns is due a period
 * later; now is the sample's own clock reading, so this costs no read of the timer. A tick that comes earlier
 * than that, or under an eighth of a period late, is taken as due now: the schedule follows the timer, and the
 * timer's and the clock's calibrations (both against the PIT) cannot drift apart by more than a tick's rounding
 * before the next punctual tick catches them up. */
static inline int64_t tick_held_since_due(struct profiler_cpu_run *c, int64_t now, int64_t period)
{
    int64_t held = now - (c->last_due_ns + period);
    if (held < period / 8) {
        c->last_due_ns = now;
        return held > 0 ? held : 0;
    }
    c->last_due_ns = now - held % period; /* the latest tick due by now is the one taken */
    return held;
}

/* A tick more than half a period late (tick_held_since_due), interrupting ctx: held off by interrupts-off code or
 * the CPU taken away, accounted in c; what its sample carries. */
struct tick_lateness tick_late(struct profiler_cpu_run *c, const struct context *ctx, int64_t held,
                               const struct tick_schedule *s);

#endif
