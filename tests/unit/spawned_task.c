/* tests/unit/spawned_task.c: one spawned kernel task, run when the test says (tests/unit/spawned_task.h): the
 * task's exit is a longjmp back to spawned_task_run. */
#include "spawned_task.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernel/task.h"

const char *spawned_task_name = "";
static void (*pending_entry)(void *arg);
static void *pending_arg;
static jmp_buf task_left;
static struct task spawned;

struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    (void)cpu;
    assert_string_equal(name, spawned_task_name);
    assert_null(pending_entry);
    pending_entry = entry;
    pending_arg = arg;
    return &spawned;
}

void task_exit(void)
{
    longjmp(task_left, 1);
}

bool spawned_task_pending(void)
{
    return pending_entry != NULL;
}

void spawned_task_forget(void)
{
    pending_entry = NULL;
}

void spawned_task_run(void)
{
    assert_non_null(pending_entry);
    void (*entry)(void *) = pending_entry;
    pending_entry = NULL;
    if (setjmp(task_left) == 0) {
        entry(pending_arg);
        fail_msg("the spawned task (%s) returned instead of calling task_exit", spawned_task_name);
    }
}
