/* tests/unit/fake_kernel.h: the one fake of the kernel around the code the host programs test
 * (tests/unit/fake_kernel.c) -- the tasks, their stacks and what they are doing, the sleep, the symbol table, the
 * stack walk and the console the kernel's log (kernel/log.c) writes to. Unit tests, the fuzz targets' fakes and the benchmarks'
 * drivers link it instead of each keeping its own copy; a test that needs something else sets a variable or a
 * hook here rather than redefining the function. */
#ifndef TESTS_UNIT_FAKE_KERNEL_H
#define TESTS_UNIT_FAKE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/context.h"
#include "hal/cpu.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

/* ---- tasks ---- */

#define FAKE_STACK_WORDS 128

/* The task running on each CPU (task_current() on CPU i is &fake_task[i]), and the stack of each CPU's task
 * (task_stack_bounds(task) is fake_stack[task->cpu]). */
extern struct task fake_task[MAX_CPUS];
extern _Alignas(16) uint64_t fake_stack[MAX_CPUS][FAKE_STACK_WORDS];
/* When set, the current task on every CPU (a program with tasks of its own). */
extern struct task *fake_current;
/* task_current() answers NULL (an interrupt before the CPU has a task). */
extern bool fake_no_task;
/* Called by task_stack_bounds before it answers: a test's other CPU acting between the sampler's load of the
 * task and its walk. */
extern void (*fake_stack_bounds_hook)(const struct task *task);

/* The other tasks a CPU has beside its current one, for a wall run's sweep (sched_for_each_other_here gives
 * those whose cpu is fake_cpu_index), NULL-terminated; task_chain_off_cpu walks fake_other_tasks[i] to the one
 * frame fake_chain_pc[i] (none when 0). task_for_each gives fake_task[0 .. fake_cpu_count). */
#define FAKE_OTHER_TASKS 16
extern struct task *fake_other_tasks[FAKE_OTHER_TASKS + 1];
extern uintptr_t fake_chain_pc[FAKE_OTHER_TASKS];

/* Every task zeroed, fake_task[i] on CPU i with pid first_pid + i; the stacks zeroed; fake_current,
 * fake_no_task, fake_stack_bounds_hook, fake_chain_hook and the other tasks cleared. */
void fake_tasks_reset(uint32_t first_pid);

/* task_chain_off_cpu answers fake_chain_hook's frames when it is set (a test's other CPU may act there, between
 * the command's two looks at the task), else the other tasks' one frame above. What a task is doing and the
 * names are the kernel's own,. */
extern int (*fake_chain_hook)(const struct task *task, uintptr_t *out, int max);

/* ---- the tick and the sleep ---- */

/* An interrupted context: at pc, with those stack and frame pointers, interrupts on; nothing else set. */
struct context fake_context(uintptr_t pc, uintptr_t sp, uintptr_t rbp);
/* Code at pc interrupted by vector (2 an NMI, 0xE0 the tick), interrupts on, no stack to walk. */
struct context fake_interrupt(uintptr_t pc, uint64_t vector);

/* One tick on every online CPU in turn (fake_cpu_index restored after): fake_tick_hook(cpu) when set, else
 * profiler_tick, when the program has the profiler, on a context at fake_tick_pc + (round % 3) * 8 with
 * interrupts on; either way the tick counts for the CPU's current task, as the scheduler's does.
 * fake_tick_rounds counts the calls, fake_ticks the ticks. */
void fake_tick_every_cpu(unsigned round);
extern void (*fake_tick_hook)(unsigned cpu);
extern uintptr_t fake_tick_pc; /* BurnInner+0x10 of the default image until a test sets it */
extern unsigned fake_tick_rounds, fake_ticks;

/* task_sleep_ms -- the profiler's stop waiting for the CPUs to let go of the run, a command waiting a little:
 * one round of ticks (round 0), the clock moved on by ms, then fake_sleep_hook(ms) when set. fake_sleeps
 * counts the sleeps. */
extern void (*fake_sleep_hook)(uint32_t ms);
extern unsigned fake_sleeps;

/* ---- the kernel image ---- */

/* The default image: text [0x1000, 0x3000) with BurnInner at 0x1000 and its caller BurnTask at 0x1100, each
 * 0x100 long. kernel_symtab() answers fake_symtab, which starts as &fake_burn_symtab. */
#define FAKE_BURN_INNER 0x1000
#define FAKE_BURN_TASK 0x1100
extern const struct symtab fake_burn_symtab;
extern const struct symtab *fake_symtab;
/* A test's own image: *tab made the table of count syms (names their names) over the text [text, text + len),
 * and kernel_symtab() answers it from now on. */
void fake_image(struct symtab *tab, const struct ksym *syms, uint32_t count, const char *names, const void *text,
                size_t len);

/* ---- the stack walk ---- */

/* stack_walk (unless the program links kernel/stacktrace.c): the first fake_walk_frames of fake_walk_chain (at
 * most max), none by default -- no frame chain of the host's is inside a fake stack. A test of a caller's chain
 * (the heap's allocation sites) sets them. */
#define FAKE_WALK_MAX 16
extern uintptr_t fake_walk_chain[FAKE_WALK_MAX];
extern unsigned fake_walk_frames;

/* stack_trace_from (unless the program links the real walk, kernel/stacktrace.c): frame 0 is pc, and the first
 * word of the stack is its caller when it holds one. Fails the program when asked for other than
 * PROFILE_MAX_FRAMES frames. fake_walk_hook, when set, is called inside the walk (a sample between its
 * record's reserve and its commit). */
extern void (*fake_walk_hook)(void);

/* ---- the console ---- */

/* What the kernel's log (kernel/log.c) wrote to the console since fake_log_reset(): its lines, each ending in
 * a newline, cut at the buffer's end; fake_log_lines counts the lines. */
extern char fake_log_text[2048];
extern unsigned fake_log_lines;
void fake_log_reset(void);
/* Keys pressed and not yet read, each fake_console_key ('q' unless a test says otherwise): console_input_pending
 * and console_input_peek see them, console_read_char takes one. */
extern unsigned fake_console_keys;
extern char fake_console_key;

#endif
