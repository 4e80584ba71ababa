/* kernel/profiler/task_dump.h: every task now, copied (kernel/profiler/task_dump.c) -- what `tasks` prints
 * (kernel/shell/cmd_tasks.c) and what /debug/pprof/goroutine serves (kernel/profiler/goroutine.c): each live
 * task's fields, its labels as text and its call chain as raw addresses, copied under the task table's lock into
 * rows allocated before, so that resolving and printing -- which may sleep (a UDP reply waits for the card) --
 * come after. Task context. It takes no profiler and stops no CPU: a snapshot beside whatever runs.
 *
 * The printed form (docs/profiler.md, "Where every task is"):
 *
 *   task pid=5 cpu=0 name=shell activity=waiting wait=input wait_ms=1234 labels=-
 *           <- console_read_char+0x5f
 *           <- console_shell+0x4e
 *           <- task_entry_trampoline+0x9
 *
 * one header line of key=value fields (wait= and wait_ms= only for a waiting task, idle=yes only for an idle
 * task), then the chain, one frame per line: "at" the instruction a preempted task stopped at, "<-" each return
 * address, or one line in parentheses saying why there is no chain. */
#ifndef KERNEL_PROFILER_TASK_DUMP_H
#define KERNEL_PROFILER_TASK_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/labels.h"
#include "kernel/task.h"

#define TASK_DUMP_MAX_FRAMES 16 /* as deep as a panic's backtrace */

/* Where a row's chain came from, which decides how it is printed. */
enum task_dump_chain {
    TASK_CHAIN_CALLERS,       /* return addresses only: a blocking call's site and its callers, or the dumper's own */
    TASK_CHAIN_INTERRUPTED,   /* frames[0] is where the task was preempted, the rest return addresses */
    TASK_CHAIN_ON_CPU,        /* running on another CPU: its stack changes under any walk from here */
    TASK_CHAIN_RAN_MEANWHILE, /* its CPU ran it during every walk */
};

struct task_dump_row {
    uint32_t pid;
    unsigned cpu;
    char name[TASK_NAME_MAX];
    bool idle;
    uint8_t activity;   /* enum task_activity */
    uint8_t waiting_on; /* enum task_wait, for a waiting task */
    uint8_t chain;      /* enum task_dump_chain */
    uint8_t nframes;
    int64_t waited_ns;
    char labels[TASK_LABELS_TEXT_MAX]; /* as `ps` prints them: "job=a,span=5", "-" */
    uintptr_t frames[TASK_DUMP_MAX_FRAMES];
};

struct task_dump {
    struct task_dump_row *rows; /* pid order */
    unsigned count;
    unsigned missed; /* live tasks that found no row: spawned between the count and the copy */
};

/* Task context, holding no lock. Every live task copied into d (d->rows on the heap: task_dump_free); the task
 * calling it running, with its chain from the function that called task_dump_take up. False when the heap had
 * no room for the rows (d empty). */
bool task_dump_take(struct task_dump *d);
void task_dump_free(struct task_dump *d);

struct sink;
/* One row as `tasks` prints it: the header line and the chain's lines. */
void task_dump_print_row(struct sink *out, const struct task_dump_row *row);
/* Every row, then "tasks: N more started while the table was read, not shown" when some were missed. */
void task_dump_print(struct sink *out, const struct task_dump *d);

#endif
