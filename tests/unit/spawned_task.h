/* tests/unit/spawned_task.h: the kernel's task_spawn and task_exit for a test that drives a kernel task by hand
 * (tests/unit/spawned_task.c): task_spawn keeps one spawned task -- its name must be spawned_task_name -- and
 * spawned_task_run runs it, here, until it calls task_exit. A stream's task, an HTTP profile's. */
#ifndef TESTS_UNIT_SPAWNED_TASK_H
#define TESTS_UNIT_SPAWNED_TASK_H

#include <stdbool.h>

/* The name every spawn must give (checked). */
extern const char *spawned_task_name;
/* Whether a task was spawned and has not been run yet. */
bool spawned_task_pending(void);
/* Forgets a spawned task that was never run (a test's setup). */
void spawned_task_forget(void);
/* Runs the spawned task until it calls task_exit; fails the test if there is none, or if it returns instead. */
void spawned_task_run(void);

#endif
