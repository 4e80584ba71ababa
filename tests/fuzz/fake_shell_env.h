/* tests/fuzz/fake_shell_env.h: the kernel around the shell, faked for fuzz_shell (tests/fuzz/fake_shell_env.c):
 * a few tasks that never run, a network that takes every datagram, a profile window that takes a few ticks. */
#ifndef TESTS_FUZZ_FAKE_SHELL_ENV_H
#define TESTS_FUZZ_FAKE_SHELL_ENV_H

#include "kernel/task.h"

#define FAKE_TASKS 4

/* tasks[0] is the shell (pid 1, CPU 0, the current task); the others are pids 2..FAKE_TASKS. */
extern struct task fake_tasks[FAKE_TASKS];

/* Everything back to the first input's state: tasks without labels, an empty label table, no netload. */
void fake_shell_env_reset(void);

#endif
