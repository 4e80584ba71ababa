/* kernel/shell/cmd_tasks.c: the `tasks` command -- every live task in pid order, what it is doing and the call
 * chain it is in, as Linux's sysrq-t and Go's goroutine?debug=2 print theirs. The format (docs/profiler.md, "Where
 * every task is"):
 *
 *   task pid=5 cpu=0 name=shell activity=waiting wait=input wait_ms=1234 labels=-
 *           <- console_read_char+0x5f
 *           <- console_shell+0x4e
 *           <- task_entry_trampoline+0x9
 *
 * one header line of key=value fields (wait= and wait_ms= only for a waiting task, idle=yes only for an idle
 * task), then the chain, one frame per line: "at" the instruction a preempted task stopped at, "<-" each return
 * address, or one line in parentheses saying why there is no chain.
 *
 * Two steps, because the table lock and the output do not mix: under the lock (task_for_each) each task is copied
 * -- its fields, its labels as text, its chain as raw addresses -- into rows allocated before; with the lock let
 * go the addresses are resolved and printed, since a UDP reply's sink may sleep waiting for the card. */
#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/lib/string.h"
#include "kernel/shell/commands.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

#define TASKS_MAX_FRAMES 16 /* as deep as a panic's backtrace */
#define TASKS_WALK_TRIES 3  /* walks of a task that keeps running meanwhile before saying so */
#define TASKS_SLACK 8       /* rows beyond the count, for tasks spawned between the count and the copy */

/* Where a row's chain came from, which decides how it is printed. */
enum chain_kind {
    CHAIN_CALLERS,       /* return addresses only: a blocking call's site and its callers, or this task's own */
    CHAIN_INTERRUPTED,   /* frames[0] is where the task was preempted, the rest return addresses */
    CHAIN_ON_CPU,        /* running on another CPU: its stack changes under any walk from here */
    CHAIN_RAN_MEANWHILE, /* its CPU ran it during every walk */
};

struct task_row {
    uint32_t pid;
    unsigned cpu;
    char name[TASK_NAME_MAX];
    bool idle;
    uint8_t activity;   /* enum task_activity */
    uint8_t waiting_on; /* enum task_wait, for a waiting task */
    uint8_t chain;      /* enum chain_kind */
    uint8_t nframes;
    int64_t waited_ns;
    char labels[TASK_LABELS_TEXT_MAX];
    uintptr_t frames[TASKS_MAX_FRAMES];
};

struct tasks_copy {
    struct task_row *rows;
    unsigned cap, count;
    unsigned missed; /* live tasks that found no row: spawned after the count */
    const struct task *self;
    uintptr_t self_frames[TASKS_MAX_FRAMES];
    int self_nframes;
    struct text_bounds text;
    int64_t now;
};

/* The chain of the task running the command, from this function's own frame: its first return address is in
 * cmd_tasks. Kept out of line so that frame is its own. */
static __attribute__((noinline)) int own_chain(uintptr_t *out, int max)
{
    struct stack_bounds stack = task_stack_bounds(task_current());
    return stack_walk((uintptr_t)__builtin_frame_address(0), &stack, out, max);
}

/* The chain of a task that is not the caller, read while its CPU may switch to it at any moment; false when the
 * task turns out to have exited. Its CPU counts each switch to it (`switches`): the same count before and after
 * the walk, and the task not running after it, means it did not run meanwhile and the frames are the ones it
 * left. The wait frame is compared too, for a task that left one blocking call for another without being switched
 * away (a wake that came before it slept). Nothing here can fault whatever the task does: task_chain_off_cpu
 * reads only inside its stack, and the table lock the caller holds keeps the stack from being freed. */
static bool copy_chain(const struct tasks_copy *c, const struct task *t, struct task_row *row)
{
    for (int attempt = 0; attempt < TASKS_WALK_TRIES; attempt++) {
        uint64_t switches = atomic_load_explicit(&t->switches, memory_order_acquire);
        row->activity = (uint8_t)task_activity_now(t, false);
        if (row->activity == TASK_ACT_NONE)
            return false; /* it exited on its CPU meanwhile */
        if (row->activity == TASK_ACT_RUNNING) {
            row->chain = CHAIN_ON_CPU;
            return true;
        }
        row->waiting_on = t->waiting_on;
        row->waited_ns = c->now - t->wait_since_ns;
        uintptr_t wait_frame = atomic_load_explicit(&t->wait_frame, memory_order_acquire);
        int n = task_chain_off_cpu(t, &c->text, row->frames, TASKS_MAX_FRAMES);
        atomic_thread_fence(memory_order_acquire); /* the walk's reads come before the second look */
        enum task_activity after = task_activity_now(t, false);
        if (after == TASK_ACT_NONE)
            return false;
        if (atomic_load_explicit(&t->switches, memory_order_relaxed) == switches &&
            atomic_load_explicit(&t->wait_frame, memory_order_relaxed) == wait_frame && after != TASK_ACT_RUNNING) {
            row->nframes = (uint8_t)n;
            row->chain = wait_frame ? CHAIN_CALLERS : CHAIN_INTERRUPTED;
            return true;
        }
    }
    row->nframes = 0;
    row->chain = CHAIN_RAN_MEANWHILE;
    return true;
}

/* task_for_each's callback, under the table lock: one row per live task. Takes no lock but the label pool's
 * (as `ps` does) and does not sleep. */
static void copy_task(struct task *t, void *arg)
{
    struct tasks_copy *c = arg;
    if (atomic_load(&t->state) == TASK_DEAD)
        return; /* exited, waiting for the reaper */
    if (c->count == c->cap) {
        c->missed++;
        return;
    }
    struct task_row *row = &c->rows[c->count++];
    memset(row, 0, sizeof *row); /* a row given back by a task that exited meanwhile is used again */
    row->pid = t->pid;
    row->cpu = t->cpu;
    strlcpy(row->name, t->name, sizeof row->name);
    row->idle = t->is_idle;
    task_labels_text(t, row->labels, sizeof row->labels);
    if (t == c->self) {
        row->activity = TASK_ACT_RUNNING;
        row->chain = CHAIN_CALLERS;
        row->nframes = (uint8_t)c->self_nframes;
        memcpy(row->frames, c->self_frames, sizeof row->frames);
        return;
    }
    if (!copy_chain(c, t, row))
        c->count--;
}

static void print_row(struct sink *out, const struct task_row *row)
{
    sink_printf(out, "task pid=%u cpu=%u name=%s%s activity=%s", row->pid, row->cpu, row->name,
                row->idle ? " idle=yes" : "", task_activity_name(row->activity));
    if (row->activity == TASK_ACT_WAITING) {
        int64_t ms = row->waited_ns > 0 ? row->waited_ns / 1000000 : 0;
        sink_printf(out, " wait=%s wait_ms=%lld", task_wait_name(row->waiting_on), (long long)ms);
    }
    sink_printf(out, " labels=%s\n", row->labels);
    switch (row->chain) {
    case CHAIN_ON_CPU:
        sink_printf(out, "        (running on cpu %u)\n", row->cpu);
        return;
    case CHAIN_RAN_MEANWHILE:
        sink_puts(out, "        (ran meanwhile)\n");
        return;
    }
    if (row->nframes == 0) {
        sink_puts(out, "        (no frames)\n");
    } else if (row->chain == CHAIN_INTERRUPTED) {
        backtrace_print_pc(out, row->frames[0]);
        backtrace_print(out, row->frames + 1, row->nframes - 1);
    } else {
        backtrace_print(out, row->frames, row->nframes);
    }
}

static void count_task(struct task *t, void *arg)
{
    (void)t;
    (*(unsigned *)arg)++;
}

int cmd_tasks(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)argv, (void)from;
    if (argc != 1)
        return shell_usage(out, "tasks");
    unsigned count = 0;
    task_for_each(count_task, &count);
    struct tasks_copy c = { .cap = count + TASKS_SLACK, .self = task_current() };
    c.rows = kzalloc(c.cap * sizeof *c.rows);
    if (!c.rows) {
        sink_puts(out, "tasks: no memory for a copy of the task table\n");
        return 1;
    }
    const struct symtab *tab = kernel_symtab();
    c.text = (struct text_bounds){ tab->text_start, tab->text_end };
    c.self_nframes = own_chain(c.self_frames, TASKS_MAX_FRAMES);
    c.now = time_ns();
    task_for_each(copy_task, &c);

    for (unsigned i = 0; i < c.count; i++)
        print_row(out, &c.rows[i]);
    if (c.missed)
        sink_printf(out, "tasks: %u more started while the table was read, not shown\n", c.missed);
    kfree(c.rows);
    return 0;
}
