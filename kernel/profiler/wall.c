/* kernel/profiler/wall.c: a wall run's sweep (kernel/profiler/wall.h) -- every task of one CPU sampled at one
 * moment, whatever it is doing, from that CPU's own tick. */
#include "kernel/profiler/wall.h"

/* A wall run's sweep, on this CPU's first tick each PROFILE_WALL_PERIOD_MS: one record for each of this CPU's
 * tasks, what it is doing and where -- the interrupted chain of the one running, and for each other its chain
 * from the call it waits in (or where it was preempted). Each CPU sweeps only its own tasks, from its own tick, because only
 * there are they still: none of them runs while its CPU is in the tick, so their stacks can be walked without a
 * lock, and the list is the scheduler's own, which the tick does not interrupt. */
struct wall_sweep {
    const struct profiler_wall_target *t;
    uint32_t run;
    unsigned cpu;
    int64_t now;
    uint32_t weight; /* the time since this CPU's last sweep: what each of its samples stands for */
};

/* One wall record of task, doing act: its chain from ctx when it is the one running (interrupted here), else
 * from where it waits. */
static void wall_record(const struct wall_sweep *w, const struct task *task, enum task_activity act,
                        const struct context *ctx)
{
    struct profile_ring *ring = w->t->ring;
    struct profile_record *rec = profile_ring_reserve(ring);
    if (!rec)
        return;
    rec->run = w->run;
    rec->cpu = (uint16_t)w->cpu;
    rec->flags = PROFILE_REC_WALL;
    rec->wall.activity = (uint8_t)act;
    rec->wall.waiting_on = act == TASK_ACT_WAITING ? task->waiting_on : TASK_WAIT_NONE;
    rec->wall.unused = 0;
    rec->period = w->weight;
    rec->time_ns = w->now;
    profile_record_task(rec, task);
    struct stack_bounds stack = task_stack_bounds(task);
    int n = ctx ? stack_trace_from(context_pc(ctx), context_sp(ctx), context_fp(ctx), &stack, w->t->text,
                                   rec->frames, PROFILE_MAX_FRAMES)
                : task_chain_off_cpu(task, w->t->text, rec->frames, PROFILE_MAX_FRAMES);
    if (n < 1) {
        rec->frames[0] = 0; /* nothing to walk: folded as a leaf of address 0, still counted */
        n = 1;
    }
    rec->nframes = (uint8_t)n;
    profile_ring_commit(ring);
}

static void wall_record_off_cpu(struct task *task, void *arg)
{
    enum task_activity act = task_activity_now(task, false);
    if (act != TASK_ACT_NONE)
        wall_record(arg, task, act, 0);
}

static void wall_count(struct task *task, void *arg)
{
    (void)task;
    (*(uint32_t *)arg)++;
}

/* The sweep, when the ring has room for all of it; else it is put off whole (false), its records counted as
 * drops, and the next sweep stands for its time too: a ring too small for this CPU's tasks costs resolution,
 * never one task's share -- a sweep cut short would keep the tasks first in the list and drop the rest. */
bool profiler_wall_sweep(const struct profiler_wall_target *t, const struct context *ctx, uint32_t run,
                         unsigned cpu, int64_t now, uint32_t weight)
{
    const struct task *current = task_current();
    bool running = current && !current->is_idle;
    uint32_t records = running;
    sched_for_each_other_here(wall_count, &records);
    struct profile_ring *ring = t->ring;
    uint32_t used = atomic_load_explicit(&ring->head, memory_order_relaxed) -
                    atomic_load_explicit(&ring->tail, memory_order_acquire);
    if (ring->records && records > ring->mask + 1 - used) {
        atomic_fetch_add_explicit(&ring->drops, records, memory_order_relaxed);
        return false;
    }

    _Atomic uint32_t *sampling = t->sampling;
    uint32_t mark = atomic_load_explicit(sampling, memory_order_relaxed) + 1;
    atomic_store_explicit(sampling, mark, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst); /* as in record_sample_at: the mark before any task's pointer */
    struct wall_sweep w = { t, run, cpu, now, weight };
    if (running)
        wall_record(&w, current, TASK_ACT_RUNNING, ctx);
    sched_for_each_other_here(wall_record_off_cpu, &w);
    atomic_store_explicit(sampling, mark + 1, memory_order_release);
    return true;
}

