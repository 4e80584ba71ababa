/* kernel/profiler/task_dump.c: every task now, copied and printed (kernel/profiler/task_dump.h) -- the copy
 * under the task table's lock, each chain read while its CPU may switch to the task at any moment and checked
 * around the walk, and the lines `tasks` and /debug/pprof/goroutine?debug=2 print. */
#include "kernel/profiler/task_dump.h"

#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"

#define TASKS_WALK_TRIES 3 /* walks of a task that keeps running meanwhile before saying so */
#define TASKS_SLACK 8      /* rows beyond the count, for tasks spawned between the count and the copy */

struct dump_copy {
    struct task_dump *d;
    unsigned cap;
    const struct task *self;
    uintptr_t self_frames[TASK_DUMP_MAX_FRAMES];
    int self_nframes;
    struct text_bounds text;
    int64_t now;
};

/* The chain of the task taking the dump, from this function's own frame, less that frame's own return address
 * (into task_dump_take): its first return address is in the function that called task_dump_take. Kept out of
 * line so that frame is its own. */
static __attribute__((noinline)) int own_chain(uintptr_t *out, int max)
{
    uintptr_t walked[TASK_DUMP_MAX_FRAMES + 1];
    struct stack_bounds stack = task_stack_bounds(task_current());
    int n = stack_walk((uintptr_t)__builtin_frame_address(0), &stack, walked, max + 1);
    for (int i = 1; i < n; i++)
        out[i - 1] = walked[i];
    return n > 0 ? n - 1 : 0;
}

/* The chain of a task that is not the caller, read while its CPU may switch to it at any moment; false when the
 * task turns out to have exited. Its CPU counts each switch to it (`switches`): the same count before and after
 * the walk, and the task not running after it, means it did not run meanwhile and the frames are the ones it
 * left. The wait frame is compared too, for a task that left one blocking call for another without being switched
 * away (a wake that came before it slept). Nothing here can fault whatever the task does: task_chain_off_cpu
 * reads only inside its stack, and the table lock the caller holds keeps the stack from being freed. */
static bool copy_chain(const struct dump_copy *c, const struct task *t, struct task_dump_row *row)
{
    for (int attempt = 0; attempt < TASKS_WALK_TRIES; attempt++) {
        uint64_t switches = atomic_load_explicit(&t->switches, memory_order_acquire);
        row->activity = (uint8_t)task_activity_now(t, false);
        if (row->activity == TASK_ACT_NONE)
            return false; /* it exited on its CPU meanwhile */
        if (row->activity == TASK_ACT_RUNNING) {
            row->chain = TASK_CHAIN_ON_CPU;
            return true;
        }
        row->waiting_on = t->waiting_on;
        row->waited_ns = c->now - t->wait_since_ns;
        uintptr_t wait_frame = atomic_load_explicit(&t->wait_frame, memory_order_acquire);
        int n = task_chain_off_cpu(t, &c->text, row->frames, TASK_DUMP_MAX_FRAMES);
        atomic_thread_fence(memory_order_acquire); /* the walk's reads come before the second look */
        enum task_activity after = task_activity_now(t, false);
        if (after == TASK_ACT_NONE)
            return false;
        if (atomic_load_explicit(&t->switches, memory_order_relaxed) == switches &&
            atomic_load_explicit(&t->wait_frame, memory_order_relaxed) == wait_frame && after != TASK_ACT_RUNNING) {
            row->nframes = (uint8_t)n;
            row->chain = wait_frame ? TASK_CHAIN_CALLERS : TASK_CHAIN_INTERRUPTED;
            return true;
        }
    }
    row->nframes = 0;
    row->chain = TASK_CHAIN_RAN_MEANWHILE;
    return true;
}

/* task_for_each's callback, under the table lock: one row per live task. Takes no lock but the label pool's
 * (as `ps` does) and does not sleep. */
static void copy_task(struct task *t, void *arg)
{
    struct dump_copy *c = arg;
    struct task_dump *d = c->d;
    if (atomic_load(&t->state) == TASK_DEAD)
        return; /* exited, waiting for the reaper */
    if (d->count == c->cap) {
        d->missed++;
        return;
    }
    struct task_dump_row *row = &d->rows[d->count++];
    memset(row, 0, sizeof *row); /* a row given back by a task that exited meanwhile is used again */
    row->pid = t->pid;
    row->cpu = t->cpu;
    strlcpy(row->name, t->name, sizeof row->name);
    row->idle = t->is_idle;
    task_labels_text(t, row->labels, sizeof row->labels);
    if (t == c->self) {
        row->activity = TASK_ACT_RUNNING;
        row->chain = TASK_CHAIN_CALLERS;
        row->nframes = (uint8_t)c->self_nframes;
        memcpy(row->frames, c->self_frames, sizeof row->frames);
        return;
    }
    if (!copy_chain(c, t, row))
        d->count--;
}

static void count_task(struct task *t, void *arg)
{
    (void)t;
    (*(unsigned *)arg)++;
}

__attribute__((noinline)) bool task_dump_take(struct task_dump *d)
{
    d->count = d->missed = 0;
    unsigned count = 0;
    task_for_each(count_task, &count);
    struct dump_copy c = { .d = d, .cap = count + TASKS_SLACK, .self = task_current() };
    d->rows = kzalloc(c.cap * sizeof *d->rows);
    if (!d->rows)
        return false;
    const struct symtab *tab = kernel_symtab();
    c.text = (struct text_bounds){ tab->text_start, tab->text_end };
    c.self_nframes = own_chain(c.self_frames, TASK_DUMP_MAX_FRAMES);
    c.now = time_ns();
    task_for_each(copy_task, &c);
    return true;
}

void task_dump_free(struct task_dump *d)
{
    kfree(d->rows);
    d->rows = 0;
    d->count = 0;
}

void task_dump_print_row(struct sink *out, const struct task_dump_row *row)
{
    sink_printf(out, "task pid=%u cpu=%u name=%s%s activity=%s", row->pid, row->cpu, row->name,
                row->idle ? " idle=yes" : "", task_activity_name(row->activity));
    if (row->activity == TASK_ACT_WAITING) {
        int64_t ms = row->waited_ns > 0 ? row->waited_ns / 1000000 : 0;
        sink_printf(out, " wait=%s wait_ms=%lld", task_wait_name(row->waiting_on), (long long)ms);
    }
    sink_printf(out, " labels=%s\n", row->labels);
    switch (row->chain) {
    case TASK_CHAIN_ON_CPU:
        sink_printf(out, "        (running on cpu %u)\n", row->cpu);
        return;
    case TASK_CHAIN_RAN_MEANWHILE:
        sink_puts(out, "        (ran meanwhile)\n");
        return;
    }
    if (row->nframes == 0) {
        sink_puts(out, "        (no frames)\n");
    } else if (row->chain == TASK_CHAIN_INTERRUPTED) {
        backtrace_print_pc(out, row->frames[0]);
        backtrace_print(out, row->frames + 1, row->nframes - 1);
    } else {
        backtrace_print(out, row->frames, row->nframes);
    }
}

void task_dump_print(struct sink *out, const struct task_dump *d)
{
    for (unsigned i = 0; i < d->count; i++)
        task_dump_print_row(out, &d->rows[i]);
    if (d->missed)
        sink_printf(out, "tasks: %u more started while the table was read, not shown\n", d->missed);
}
