/* kernel/profiler/wall.h: a wall run's sweep (kernel/profiler/wall.c), called from the sample path's tick
 * (kernel/profiler.c) every PROFILE_WALL_PERIOD_MS on each CPU, and the task's part of any record, which both
 * write. Interrupt context: no lock, no allocation. */
#ifndef KERNEL_PROFILER_WALL_H
#define KERNEL_PROFILER_WALL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "hal/context.h"
#include "kernel/labels.h"
#include "kernel/profiler_ring.h"
#include "kernel/stacktrace.h"
#include "kernel/task.h"

/* The task's part of a record: its pid, label set and span. The caller's sampler word is odd (inside a sample):
 * the pool cannot free or reuse the set before it leaves. */
static inline __attribute__((always_inline)) void profile_record_task(struct profile_record *rec, const struct task *task)
{
    rec->pid = task->pid;
    /* acquire: the set a label swap published is complete before anyone follows this pointer */
    const struct label_set *set = atomic_load_explicit(&task->labels, memory_order_acquire);
    rec->labels = set;
    rec->labels_generation = set ? set->generation : 0;
    rec->span = atomic_load_explicit(&task->span, memory_order_relaxed);
}

/* Where a CPU's sweep writes: its ring, its tick sampler's word of the label pool's readers (odd while a sample
 * may hold a set), and the text the walks may read. */
struct profiler_wall_target {
    struct profile_ring *ring;
    _Atomic uint32_t *sampling;
    const struct text_bounds *text;
};

/* One sweep of this CPU's tasks into t's ring, each record of run, taken at now and weighing weight ns: the task
 * interrupted (ctx), unless idle, and every other task of this CPU. False when the ring has no room for all of
 * them: then nothing is written, the records are counted as the ring's drops, and the caller's next sweep stands
 * for this one's time too. */
bool profiler_wall_sweep(const struct profiler_wall_target *t, const struct context *ctx, uint32_t run,
                         unsigned cpu, int64_t now, uint32_t weight);

#endif
