/* tests/unit/no_tasks.c: a kernel whose commands never get a task of their own -- task_spawn gives none (so
 * `profile stream`, linked in with `profile`, never starts), no task exits, and no CPU has ticked -- for the
 * command tests that run profiles in the test's own thread (test_cmd_profile.c, test_cmd_profile_top.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernel/task.h"

struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    (void)name, (void)entry, (void)arg, (void)cpu;
    return NULL;
}

void task_exit(void)
{
    fail_msg("task_exit without a task");
    abort();
}

void sched_cpu_ticks(unsigned cpu, uint64_t *ticks, uint64_t *busy)
{
    (void)cpu;
    *ticks = *busy = 0;
}
