/* kernel/task_wait.c: what a task is doing, in words -- the names of its waits and activities, and its activity
 * at a moment (task_activity_now), read from the fields the scheduler and the blocking calls keep
 * (kernel/task.h). Pure, apart from the tick's rate, so the host tests link it beside the fake kernel. */
#include "kernel/task.h"

#include "hal/cpu.h"

const char *task_wait_name(enum task_wait why)
{
    static const char *const names[TASK_WAIT_KINDS] = {
        [TASK_WAIT_NONE] = "none", [TASK_WAIT_TIMER] = "sleep", [TASK_WAIT_INPUT] = "input",
        [TASK_WAIT_NET] = "net",   [TASK_WAIT_TASK] = "task",   [TASK_WAIT_DEVICE] = "device",
    };
    return (unsigned)why < TASK_WAIT_KINDS ? names[why] : "?";
}

const char *task_activity_name(enum task_activity act)
{
    switch (act) {
    case TASK_ACT_RUNNING: return "running";
    case TASK_ACT_RUNNABLE: return "runnable";
    case TASK_ACT_WAITING: return "waiting";
    default: return "?";
    }
}

/* A sleeper's wake time has passed, but only its CPU's schedule makes it ready, on the tick. One due within the
 * last tick period is being woken by this very tick (the wall sweep runs just before the schedule): its wait
 * ends now, as its own clock sees it. Only one overdue by more than that waits for its CPU. */
static bool overdue(const struct task *task, int64_t now)
{
    unsigned hz = tick_hz();
    return now - task->wake_at_ns > 1000000000ll / (hz ? hz : 100);
}

enum task_activity task_activity_now(const struct task *task, bool current, int64_t now)
{
    if (current)
        return TASK_ACT_RUNNING;
    switch (atomic_load(&task->state)) {
    case TASK_RUNNING:
        return TASK_ACT_RUNNING; /* on its CPU, seen from another */
    case TASK_READY:
        return TASK_ACT_RUNNABLE;
    case TASK_SLEEPING:
        return overdue(task, now) ? TASK_ACT_RUNNABLE : TASK_ACT_WAITING;
    case TASK_BLOCKED:
        return task->block_has_deadline && overdue(task, now) ? TASK_ACT_RUNNABLE : TASK_ACT_WAITING;
    default:
        return TASK_ACT_NONE; /* exited */
    }
}
