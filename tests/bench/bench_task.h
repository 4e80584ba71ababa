/* tests/bench/bench_task.h: the benchmark driver's own thread as the kernel's current task (tests/bench/
 * bench_task.c) -- task_current() and task_stack_bounds() over this thread's stack, so the kernel's real frame
 * walk (kernel/stacktrace.c) walks the driver's real frames, as it walks a task's in the kernel. For the drivers
 * that link the kernel's walk without the fake kernel (lock_cost, heap_cost). */
#ifndef TESTS_BENCH_BENCH_TASK_H
#define TESTS_BENCH_BENCH_TASK_H

/* Makes this thread the current task, its stack the task's; exits the program, naming who, when the thread's
 * stack cannot be found. */
void bench_thread_as_task(const char *who);

#endif
