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

/* The tick taken at now on the CPU whose account is c, interrupting ctx: its lateness against c's schedule
 * (c->last_due_ns; a tick that starts the schedule is due now), accounted in c. */
struct tick_lateness tick_lateness(struct profiler_cpu_run *c, const struct context *ctx, int64_t now,
                                   bool starts_schedule, const struct tick_schedule *s);

#endif
