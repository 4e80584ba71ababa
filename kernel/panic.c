/* kernel/panic.c: panics. The first CPU to panic stops the others with an NMI (they see panic_active() and
 * halt), then prints without the console lock -- a stopped CPU may hold it -- the reason, where it happened,
 * and a backtrace of return addresses as "        <- Symbol+0xoff", the profiler report's own format. Under
 * gdb=panic the debugger then takes over instead of halting. */
#include "kernel/panic.h"

#include <stdatomic.h>

#include "hal/compiler.h"
#include "hal/context.h"
#include "hal/cpu.h"
#include "hal/debug.h"
#include "hal/platform.h"
#include "kernel/console.h"
#include "kernel/lib/sink.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

#define BACKTRACE_MAX 16

static atomic_int panic_owner = -1;

/* Asked first by every NMI, the debugger's stop requests included. */
DEBUGGER_TEXT bool panic_active(void) { return atomic_load(&panic_owner) >= 0; }

static void raw_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink;
    console_write_unlocked(text, len);
}
static struct sink panic_sink = { .write = raw_write };

/* Claims the panic for this CPU and stops the others; a CPU that loses the race (or panics again while
 * printing) halts quietly, so one report comes out whole. */
static void panic_begin(void)
{
    irq_save();
    int expected = -1;
    if (!atomic_compare_exchange_strong(&panic_owner, &expected, (int)cpu_index()))
        platform_halt_forever();
    platform_stop_other_cpus();
}

/* The stack a frame pointer belongs to: the current task's, or failing that an interrupt stack. */
static struct stack_bounds stack_of(uintptr_t sp)
{
    struct task *task = task_current();
    if (task) {
        struct stack_bounds b = task_stack_bounds(task);
        if (sp >= b.lo && sp < b.hi)
            return b;
    }
    struct stack_bounds b = { 0, 0 };
    platform_interrupt_stack_bounds(sp, &b.lo, &b.hi);
    return b;
}

static void print_where(void)
{
    struct task *task = task_current();
    sink_printf(&panic_sink, "cpu %u, task %s (pid %u)\n", cpu_index(), task ? task->name : "?",
                task ? task->pid : 0);
}

/* What every panic prints first, once the machine is stopped: the message, and where it happened. */
static void panic_announce(const char *fmt, va_list ap)
{
    panic_begin();
    sink_puts(&panic_sink, "\npanic: ");
    sink_vprintf(&panic_sink, fmt, ap);
    sink_puts(&panic_sink, "\n");
    print_where();
}

void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    panic_announce(fmt, ap);
    va_end(ap);

    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    struct stack_bounds bounds = stack_of(fp);
    uintptr_t addrs[BACKTRACE_MAX];
    int n = stack_walk(fp, &bounds, addrs, BACKTRACE_MAX);
    backtrace_print(&panic_sink, addrs, n);
    gdb_panic_enter(0); /* gdb=panic: the debugger takes over here, with these registers */
    platform_halt_forever();
}

void panic_at(const struct context *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    panic_announce(fmt, ap);
    va_end(ap);

    struct symbol_hit hit;
    if (symbol_resolve(context_pc(ctx), &hit))
        sink_printf(&panic_sink, "at %s+0x%llx\n", hit.name, (unsigned long long)hit.offset);
    context_print(&panic_sink, ctx);

    const struct symtab *tab = kernel_symtab();
    struct text_bounds text = { tab->text_start, tab->text_end };
    struct stack_bounds bounds = stack_of(context_sp(ctx));
    uintptr_t addrs[BACKTRACE_MAX];
    int n = stack_trace_from(context_pc(ctx), context_sp(ctx), context_fp(ctx), &bounds, &text, addrs,
                             BACKTRACE_MAX);
    /* addrs[0] is the interrupted instruction, printed above; the rest are return addresses. */
    if (n > 1)
        backtrace_print(&panic_sink, addrs + 1, n - 1);
    gdb_panic_enter(ctx); /* gdb=panic: the debugger takes over, with the interrupted context */
    platform_halt_forever();
}
