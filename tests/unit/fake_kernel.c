/* tests/unit/fake_kernel.c: the one fake of the kernel around what the host programs test (fake_kernel.h). It
 * owns task_current and task_stack_bounds (a task and a stack per CPU), what a task is doing (its activity, the
 * names of waits and activities, its chain off the CPU), task_sleep_ms (a round of ticks and the clock),
 * kernel_symtab (a small default image), stack_trace_from (pc and one caller), stack_walk (nothing) and
 * console_write (where kernel/log.c's lines are kept). The log's formatting is the kernel's own: programs link
 * kernel/log.c with this file. No cmocka here: the fuzz targets and the benchmarks link it too. */
#include "fake_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hal.h"
#include "hal/kernel_entry.h"
#include "kernel/console.h"
#include "kernel/profiler_ring.h"

/* Weak: the programs without the profiler (the label command's, the symbol table's) link this file too, and
 * their sleeps tick nothing. */
extern __typeof__(profiler_tick) profiler_tick __attribute__((weak));

/* ---- tasks ---- */

struct task fake_task[MAX_CPUS];
_Alignas(16) uint64_t fake_stack[MAX_CPUS][FAKE_STACK_WORDS];
struct task *fake_current;
bool fake_no_task;
void (*fake_stack_bounds_hook)(const struct task *task);

void fake_tasks_reset(uint32_t first_pid)
{
    memset(fake_task, 0, sizeof fake_task);
    memset(fake_stack, 0, sizeof fake_stack);
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        fake_task[i].pid = first_pid + i;
        fake_task[i].cpu = i;
    }
    fake_current = NULL;
    fake_no_task = false;
    fake_stack_bounds_hook = NULL;
    memset(fake_other_tasks, 0, sizeof fake_other_tasks);
    memset(fake_chain_pc, 0, sizeof fake_chain_pc);
    fake_chain_hook = NULL;
    fake_walk_frames = 0;
}

struct task *task_current(void)
{
    if (fake_no_task)
        return NULL;
    return fake_current ? fake_current : &fake_task[fake_cpu_index % MAX_CPUS];
}

struct stack_bounds task_stack_bounds(const struct task *task)
{
    if (fake_stack_bounds_hook)
        fake_stack_bounds_hook(task);
    const uint64_t *stack = fake_stack[task->cpu % MAX_CPUS];
    struct stack_bounds b = { (uintptr_t)stack, (uintptr_t)(stack + FAKE_STACK_WORDS) };
    return b;
}

/* The other tasks of each CPU (a wall run's sweep: sched_for_each_other_here), NULL-terminated; each walks to
 * one frame, its fake_chain_pc. */
struct task *fake_other_tasks[FAKE_OTHER_TASKS + 1];
uintptr_t fake_chain_pc[FAKE_OTHER_TASKS];

void sched_for_each_other_here(void (*fn)(struct task *task, void *arg), void *arg)
{
    for (unsigned i = 0; i < FAKE_OTHER_TASKS && fake_other_tasks[i]; i++)
        if (fake_other_tasks[i]->cpu == fake_cpu_index)
            fn(fake_other_tasks[i], arg);
}

/* A test's own walk of any task, before the other tasks' one frame. */
int (*fake_chain_hook)(const struct task *task, uintptr_t *out, int max);

int task_chain_off_cpu(const struct task *task, const struct text_bounds *text, uintptr_t *out, int max)
{
    (void)text;
    if (fake_chain_hook)
        return fake_chain_hook(task, out, max);
    for (unsigned i = 0; i < FAKE_OTHER_TASKS && fake_other_tasks[i]; i++)
        if (fake_other_tasks[i] == task && max > 0 && fake_chain_pc[i]) {
            out[0] = fake_chain_pc[i];
            return 1;
        }
    return 0;
}

/* Weak: a test with a task table of its own defines it. Every CPU's fake task, in pid order. */
__attribute__((weak)) void task_for_each(void (*fn)(struct task *task, void *arg), void *arg)
{
    for (unsigned i = 0; i < fake_cpu_count && i < MAX_CPUS; i++)
        fn(&fake_task[i], arg);
}

/* ---- the tick and the sleep ---- */

void (*fake_tick_hook)(unsigned cpu);
uintptr_t fake_tick_pc = FAKE_BURN_INNER + 0x10;
unsigned fake_tick_rounds, fake_ticks;
void (*fake_sleep_hook)(uint32_t ms);
unsigned fake_sleeps;

struct context fake_context(uintptr_t pc, uintptr_t sp, uintptr_t rbp)
{
    struct context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.rip = pc;
    ctx.rsp = sp;
    ctx.rbp = rbp;
    ctx.rflags = 0x202;
    return ctx;
}

struct context fake_interrupt(uintptr_t pc, uint64_t vector)
{
    struct context ctx = fake_context(pc, 0, 0);
    ctx.vector = vector;
    return ctx;
}

void fake_tick_every_cpu(unsigned round)
{
    unsigned caller = fake_cpu_index;
    for (unsigned cpu = 0; cpu < fake_cpu_count; cpu++) {
        fake_cpu_index = cpu;
        struct task *task = task_current();
        if (task)
            task->ticks++;
        fake_ticks++;
        if (fake_tick_hook) {
            fake_tick_hook(cpu);
        } else if (profiler_tick) {
            struct context ctx = fake_interrupt(fake_tick_pc + (round % 3) * 8, 0xE0);
            profiler_tick(&ctx);
        }
    }
    fake_cpu_index = caller;
    fake_tick_rounds++;
}

void task_sleep_ms(uint32_t ms)
{
    fake_sleeps++;
    fake_tick_every_cpu(0);
    fake_time_ns += (int64_t)ms * 1000000;
    if (fake_sleep_hook)
        fake_sleep_hook(ms);
}

/* ---- the kernel image ---- */

static const char burn_names[] = "BurnInner\0BurnTask";
static const struct ksym burn_syms[] = { { FAKE_BURN_INNER, 0x100, 0 }, { FAKE_BURN_TASK, 0x100, 10 } };
const struct symtab fake_burn_symtab = { burn_syms, 2, burn_names, 0x1000, 0x3000 };
const struct symtab *fake_symtab = &fake_burn_symtab;

void fake_image(struct symtab *tab, const struct ksym *syms, uint32_t count, const char *names, const void *text,
                size_t len)
{
    tab->syms = syms;
    tab->count = count;
    tab->names = names;
    tab->text_start = (uintptr_t)text;
    tab->text_end = (uintptr_t)text + len;
    fake_symtab = tab;
}

/* Overrides kernel/symbols.c's weak host definition. */
const struct symtab *kernel_symtab(void) { return fake_symtab; }

/* ---- the stack walk ---- */

void (*fake_walk_hook)(void);

uintptr_t fake_walk_chain[FAKE_WALK_MAX];
unsigned fake_walk_frames;

/* Weak, as stack_trace_from below: kernel/stacktrace.c's wins where it is linked. */
__attribute__((weak)) int stack_walk(uintptr_t rbp, const struct stack_bounds *stack, uintptr_t *out, int max)
{
    (void)rbp, (void)stack;
    int n = 0;
    for (; n < max && (unsigned)n < fake_walk_frames && n < FAKE_WALK_MAX; n++)
        out[n] = fake_walk_chain[n];
    return n;
}

/* Weak: the programs that test the real walk's use (the sample path over synthetic stacks, the benchmarks)
 * link kernel/stacktrace.c, whose definition wins. */
__attribute__((weak)) int stack_trace_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp,
                                           const struct stack_bounds *stack, const struct text_bounds *text,
                                           uintptr_t *out, int max)
{
    (void)sp, (void)rbp, (void)text;
    if (max != PROFILE_MAX_FRAMES) {
        /* abort, not a cmocka failure: the fuzz targets and the benchmarks have no cmocka */
        fprintf(stderr, "fake stack_trace_from: asked for %d frames, not PROFILE_MAX_FRAMES\n", max);
        abort();
    }
    if (fake_walk_hook)
        fake_walk_hook();
    out[0] = pc;
    uint64_t caller = *(const uint64_t *)stack->lo;
    if (!caller)
        return 1;
    out[1] = (uintptr_t)caller;
    return 2;
}

/* ---- the console ---- */

char fake_log_text[2048];
unsigned fake_log_lines;

void fake_log_reset(void)
{
    fake_log_text[0] = '\0';
    fake_log_lines = 0;
}

/* kernel/log.c writes each line in one piece, newline included (through console_write_log, which draws it
 * above a waiting prompt in the kernel: the fake has no prompt). */
void console_write_log(const char *text, size_t len)
{
    console_write(text, len);
}

/* No key is ever pressed here unless a test says so (`profile top` stops on one). */
unsigned fake_console_keys;

char fake_console_key = 'q';

bool console_input_pending(void)
{
    return fake_console_keys > 0;
}

int console_input_peek(void)
{
    return fake_console_keys > 0 ? (unsigned char)fake_console_key : -1;
}

/* Weak: a program with a console reader of its own (the shell's fuzz target) keeps its own. */
__attribute__((weak)) char console_read_char(void)
{
    if (fake_console_keys > 0)
        fake_console_keys--;
    return fake_console_key;
}

void console_write(const char *text, size_t len)
{
    size_t used = strlen(fake_log_text);
    size_t room = sizeof fake_log_text - 1 - used;
    size_t n = len < room ? len : room;
    memcpy(fake_log_text + used, text, n);
    fake_log_text[used + n] = '\0';
    for (size_t i = 0; i < len; i++)
        fake_log_lines += text[i] == '\n';
}
