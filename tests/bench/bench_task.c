/* tests/bench/bench_task.c: the driver's thread as the kernel's current task (tests/bench/bench_task.h). */
#define _GNU_SOURCE /* pthread_getattr_np: this thread's stack */
#include "bench_task.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/task.h"

static struct task self;

struct task *task_current(void) { return &self; }

struct stack_bounds task_stack_bounds(const struct task *task)
{
    return (struct stack_bounds){ (uintptr_t)task->stack, (uintptr_t)task->stack + task->stack_size };
}

void bench_thread_as_task(const char *who)
{
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) || pthread_attr_getstack(&attr, &self.stack, &self.stack_size)) {
        fprintf(stderr, "%s: no stack bounds for this thread\n", who);
        exit(1);
    }
    pthread_attr_destroy(&attr);
}
