/* kernel/task_wait.c: what a task is doing, in words -- the names of its waits and activities, and its activity
 * at a moment (task_activity_now), read from the fields the scheduler and the blocking calls keep
 * (kernel/task.h). Pure, so the host tests link it beside the fake kernel. */
#include "kernel/task.h"

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

/* A sleeper stays waiting past its wake time until its CPU's tick wakes it: until then its timer has not fired
 * (the tick is the timer), and a task waiting for its timer is waiting, not held off its CPU. The tick that
 * wakes it gives it the CPU at once unless another runnable task comes first: then it is READY, runnable. */
enum task_activity task_activity_now(const struct task *task, bool current, int64_t now)
{
    (void)now;
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
