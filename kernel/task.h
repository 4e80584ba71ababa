/* kernel/task.h: tasks -- kernel threads with pids and names, each owned by one CPU, preemptively scheduled
 * on that CPU's tick, able to sleep, block and exit. Each CPU also has an idle task that halts. */
#ifndef KERNEL_TASK_H
#define KERNEL_TASK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hal/context.h"
#include "hal/kernel_entry.h"
#include "hal/spinlock.h"
#include "kernel/profiler/block_sites.h"
#include "kernel/stacktrace.h"

#define TASK_NAME_MAX 16
#define TASK_STACK_SIZE (16 * 1024)
#define STACK_PAINT 0x6b707266 /* "kprf": stacks are painted with it so `stacks` can measure the deepest use */

enum task_state {
    TASK_READY,
    TASK_RUNNING,
    TASK_SLEEPING, /* until wake_at_ns */
    TASK_BLOCKED,  /* until task_wake() */
    TASK_DEAD,     /* exited; its owner CPU hands it to the reaper */
};

/* What a task that is not running waits on, as the blocking call declares it: a wall profile names its waiting
 * samples by it, and `tasks` prints it (task_wait_name). */
enum task_wait {
    TASK_WAIT_NONE,   /* not inside a blocking call */
    TASK_WAIT_TIMER,  /* asleep until a time, for its own sake */
    TASK_WAIT_INPUT,  /* console input */
    TASK_WAIT_NET,    /* the network: a datagram, a connection, a session's traffic */
    TASK_WAIT_TASK,   /* another task: its end, its answer, its letting go */
    TASK_WAIT_DEVICE, /* a device's interrupt */
    TASK_WAIT_KINDS
};

/* What a task is doing at one moment, as a wall profile samples it and `tasks` prints it. */
enum task_activity {
    TASK_ACT_NONE,     /* no task: a CPU sample, not a wall one */
    TASK_ACT_RUNNING,  /* on its CPU */
    TASK_ACT_RUNNABLE, /* ready, waiting for its CPU */
    TASK_ACT_WAITING,  /* asleep or blocked, on its enum task_wait */
};

struct label_set;

struct task {
    uint32_t pid;
    char name[TASK_NAME_MAX];
    unsigned cpu;                /* the CPU that owns and runs it; fixed for its life */
    atomic_int state;            /* enum task_state */
    atomic_int wake_pending;     /* a task_wake() that came before the task blocked */
    int64_t wake_at_ns;
    bool block_has_deadline;     /* task_block_until: the scheduler also wakes it at wake_at_ns */
    struct context *ctx;         /* saved register frame while it is not running */
    void *stack;                 /* [stack, stack + stack_size) */
    size_t stack_size;
    bool is_idle;
    bool placed;                 /* spawned for "any CPU": counts toward that CPU's load */
    _Atomic(const struct label_set *) labels; /* current label set; swapped whole, read by the sampler */
    _Atomic uint64_t span;       /* current span (0: none), read by the sampler: kernel/labels.h */
    uint64_t ticks;              /* timer ticks that found it running */
    /* Written by the task itself as it enters and leaves a blocking call; read by its CPU's tick (the wall
     * sweep) and by `tasks`. wait_frame is the frame of the blocking call: a walk from it starts at the call
     * site, which stays on the stack, unchanged, until the call returns. */
    uint8_t waiting_on;          /* enum task_wait */
    int64_t wait_since_ns;
    _Atomic uintptr_t wait_frame; /* 0 outside a blocking call */
    /* The first frames of the walk from wait_frame, taken as the wait begins: the key its end is counted under in
     * the block table (kernel/profiler/block_sites.h). The task's own, read by no one else. */
    uintptr_t wait_chain[BLOCK_SITE_FRAMES];
    uint8_t wait_chain_frames;
    _Atomic uint64_t switches;   /* times its CPU switched to it: unchanged between two looks, it did not run */
    void (*entry)(void *arg);
    void *arg;
    struct task *next_on_cpu;    /* the owner CPU's private list */
    struct task *next_handoff;   /* lock-free lists: new tasks to a CPU, dead tasks to the reaper */
};

/* The task running on this CPU. Safe in any context. */
struct task *task_current(void);

/* Creates a task on cpu (or, with cpu < 0, on the CPU with the fewest tasks). Returns NULL when out of
 * memory or pids. The name is truncated to TASK_NAME_MAX - 1. */
struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu);

void task_yield(void);
/* Sleeps (TASK_WAIT_TIMER): for ms, or until when_ns. */
void task_sleep_ms(uint32_t ms);
void task_sleep_until(int64_t when_ns);
/* Sleeps until when_ns, waiting on why (a command that waits out another's session, say). */
void task_wait_until(int64_t when_ns, enum task_wait why);
/* Blocks until task_wake(), waiting on why; may return spuriously, so callers loop on their condition. */
void task_block(enum task_wait why);
/* task_block, but woken at deadline_ns at the latest (a network loop that also has timers to run). */
void task_block_until(int64_t deadline_ns, enum task_wait why);
/* The name of a wait ("sleep", "input", "net", "task", "device"), for reports. Inline, with the two below: pure,
 * so the host tests and the sample path share them. */
static inline const char *task_wait_name(enum task_wait why)
{
    static const char *const names[TASK_WAIT_KINDS] = {
        [TASK_WAIT_NONE] = "none", [TASK_WAIT_TIMER] = "sleep", [TASK_WAIT_INPUT] = "input",
        [TASK_WAIT_NET] = "net",   [TASK_WAIT_TASK] = "task",   [TASK_WAIT_DEVICE] = "device",
    };
    return (unsigned)why < TASK_WAIT_KINDS ? names[why] : "?";
}

/* The name of an activity ("running", "runnable", "waiting"). */
static inline const char *task_activity_name(enum task_activity act)
{
    switch (act) {
    case TASK_ACT_RUNNING: return "running";
    case TASK_ACT_RUNNABLE: return "runnable";
    case TASK_ACT_WAITING: return "waiting";
    default: return "?";
    }
}

/* What task is doing now, from its own CPU or any other (a snapshot: it may change at once). A sleeper past its
 * wake time still waits until its CPU's tick wakes it: until then its timer (the tick is the timer) has not
 * fired, and a task waiting for its timer is waiting, not held off its CPU; the tick that wakes it gives it the
 * CPU at once unless another runnable task comes first, and then it is READY: runnable. */
static inline enum task_activity task_activity_now(const struct task *task, bool current)
{
    if (current)
        return TASK_ACT_RUNNING;
    switch (atomic_load(&task->state)) {
    case TASK_RUNNING:
        return TASK_ACT_RUNNING; /* on its CPU, seen from another */
    case TASK_READY:
        return TASK_ACT_RUNNABLE;
    case TASK_SLEEPING:
    case TASK_BLOCKED:
        return TASK_ACT_WAITING;
    default:
        return TASK_ACT_NONE; /* exited */
    }
}
/* The chain of a task that is not running: from the call site of its blocking call when inside one, else from
 * its saved context (preempted). Its CPU must not run it meanwhile (its own tick), or the caller checks
 * `switches` around the walk. Returns the frames written, 0 when there is nothing to walk. */
int task_chain_off_cpu(const struct task *task, const struct text_bounds *text, uintptr_t *out, int max);
/* Wakes a blocked task; safe from interrupt context (no locks). */
void task_wake(struct task *task);
__attribute__((noreturn)) void task_exit(void);

/* The stack bounds of a task, for stack walks. */
struct stack_bounds task_stack_bounds(const struct task *task);

/* task's chain from frame, a frame of its own (its caller's __builtin_frame_address(0)), walked only inside its
 * stack: at most max return addresses, the frame's own first. None without a task: a CPU's bring-up, the boot's
 * first allocations. What a blocking call, an allocation and a contended lock each record of where they are. */
static inline unsigned task_chain_from_frame(const struct task *task, void *frame, uintptr_t *chain, int max)
{
    if (!task)
        return 0;
    struct stack_bounds stack = task_stack_bounds(task);
    int n = stack_walk((uintptr_t)frame, &stack, chain, max);
    return n > 0 ? (unsigned)n : 0;
}

/* The bookkeeping every blocking call makes around its wait (kernel/task.c's sleeps and blocks, their only
 * callers): task_wait_begin records what self waits on, since when, and its chain from frame (the blocking
 * call's own frame) for the wall profile and `tasks`; task_wait_end adds the wait and its length to the block
 * table. Declared here so that make bench (tests/bench/wall_cost.c) times the kernel's own, not a copy. */
void task_wait_begin(struct task *self, enum task_wait why, void *frame);
void task_wait_end(struct task *self);

/* Calls fn for every live task, in pid order, under the task table lock (task context only). fn must not
 * sleep, spawn or exit. */
void task_for_each(void (*fn)(struct task *task, void *arg), void *arg);
/* Looks up a live task by pid under the table lock and copies what a report needs. */
bool task_exists(uint32_t pid);
/* Publishes set (NULL clears) as the label set of the live task pid, under the table lock so the task cannot
 * be freed meanwhile (kernel/labels.h). False when there is no such task. Task context. */
bool task_set_labels_by_pid(uint32_t pid, const struct label_set *set);
/* Sets the span (kernel/labels.h) of the live task pid, under the table lock. False when there is none. */
bool task_set_span_by_pid(uint32_t pid, uint64_t span);

/* Interrupt context, on this CPU (its tick): calls fn for each of this CPU's tasks but the current one and idle.
 * The list is this CPU's own, changed only by its scheduler, which the tick does not interrupt. */
void sched_for_each_other_here(void (*fn)(struct task *task, void *arg), void *arg);

/* The deepest the task's stack has been used, measured from the paint. */
size_t task_stack_used(const struct task *task);

/* The scheduler's entry points for the arch layer (sched_init_cpu, sched_tick, sched_switch, sched_after_irq,
 * sched_idle_loop) are declared in hal/kernel_entry.h. */
/* Timer ticks on a CPU, and those that found a task other than idle running. */
void sched_cpu_ticks(unsigned cpu, uint64_t *ticks, uint64_t *busy);
/* How many times this CPU's idle task has halted: unchanged between two looks means it never went idle in
 * between. Interrupt context, about the calling CPU. */
uint64_t sched_idle_waits(void);
/* Nanoseconds the idle task of cpu has been current since the CPU started (up to now): a CPU's busy time over a
 * window is the window less the difference of two looks. Any context, about any CPU. */
uint64_t sched_cpu_idle_ns(unsigned cpu);
/* Starts the task that frees exited tasks (from kmain, once). */
void task_start_reaper(void);

#endif
