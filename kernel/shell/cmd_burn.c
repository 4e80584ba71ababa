/* kernel/shell/cmd_burn.c: the `burn` command -- busy tasks that spin through a fixed, known call chain
 * (burn_task -> burn_outer -> burn_middle -> burn_inner) for a given time, so that a profile has a known
 * answer and tests and benchmarks have a load whose throughput they can measure. `burn MS N irqsoff` runs the
 * same chain with interrupts disabled in slices of BURN_IRQSOFF_SLICE_MS (under burn_irqsoff_slice), so the
 * counter's NMI has interrupts-off code to mark and the tick has something to be held off by, while the
 * console and gdb still get in between slices. `burn MS N spans` makes each task a server of requests: every
 * BURN_SPAN_MS it starts a new one, with a new span (kernel/labels.h's numeric label, set without interning
 * anything), and logs the span and when it began; `burn spans FROM` reads that log back, so a test can check
 * every sample's span against what was current when the sample was taken. */
#include <stdatomic.h>

#include "hal/compiler.h"
#include "hal/cpu.h"
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

#define BURN_MAX_TASKS 16
#define BURN_MAX_MS 60000
#define BURN_IRQSOFF_SLICE_MS 20
#define BURN_SPAN_MS 100       /* a request's length under `spans` */
#define BURN_SPAN_LOG 8192     /* entries kept: 20 s of 4 tasks; a reader reads on before they are overwritten */
#define BURN_SPANS_PER_READ 64 /* entries `burn spans FROM` prints at a time */

struct burn_run {
    int64_t deadline_ns;
    int64_t start_ns;
    atomic_uint running;
    atomic_ullong iterations;
    unsigned tasks;
    uint32_t ms;
    bool irqsoff;
    bool spans;
};

/* The span log of every task of `burn ... spans`: entry i is at [i % BURN_SPAN_LOG]; seq is i + 1 once the
 * entry is whole (0 or older while it is written), so a reader takes only whole entries. */
struct span_entry {
    _Atomic uint64_t seq;
    uint32_t pid;
    uint64_t span;
    int64_t before_ns; /* the clock just before the task's span word changed ... */
    int64_t after_ns;  /* ... and just after: a sample taken between the two may carry either span */
};
static struct span_entry span_log[BURN_SPAN_LOG];
static atomic_ullong span_log_next; /* entries begun */
static atomic_ullong next_span = 1;  /* span ids, unique since boot */

/* A new request: a new span (0: the task is done), published with one store (no interning), and logged. */
static void begin_request(struct task *self, bool last)
{
    uint64_t span = last ? 0 : atomic_fetch_add(&next_span, 1);
    int64_t before = time_ns();
    task_set_span(self, span);
    int64_t after = time_ns();
    uint64_t i = atomic_fetch_add(&span_log_next, 1);
    struct span_entry *e = &span_log[i % BURN_SPAN_LOG];
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    e->pid = self->pid;
    e->span = span;
    e->before_ns = before;
    e->after_ns = after;
    atomic_store_explicit(&e->seq, i + 1, memory_order_release);
}

static struct burn_run current_run;
static atomic_bool run_active;

/* The last finished run, for `burn` with no arguments. */
static struct {
    bool valid;
    unsigned tasks;
    uint32_t ms;
    uint64_t iterations;
    int64_t elapsed_ns;
} last_run;

/* The chain is kept out of line and un-merged on purpose: the profiler must see each level as a frame.
 * Nearly all the time is spent in burn_inner's loop, which is kept a loop (not unrolled): QEMU's TCG takes
 * interrupts only between translated blocks, so straight-line code would bias every sample to the block
 * boundaries at the function's entry and exit. */
__attribute__((noinline)) uint64_t burn_inner(uint64_t x)
{
#pragma clang loop unroll(disable)
    for (int i = 0; i < 4096; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        OPTIMIZER_HIDE_VALUE(x);
    }
    return x;
}

__attribute__((noinline)) uint64_t burn_middle(uint64_t x)
{
    x = burn_inner(x);
    OPTIMIZER_HIDE_VALUE(x);
    return x;
}

__attribute__((noinline)) uint64_t burn_outer(uint64_t x)
{
    x = burn_middle(x);
    OPTIMIZER_HIDE_VALUE(x);
    return x;
}

/* One slice with interrupts off: the tick waits in the LAPIC until irq_restore lets it in. */
__attribute__((noinline)) static uint64_t burn_irqsoff_slice(uint64_t *x, int64_t until_ns)
{
    uint64_t n = 0;
    unsigned long flags = irq_save();
    while (time_ns() - until_ns < 0) {
        *x = burn_outer(*x);
        n++;
    }
    irq_restore(flags);
    return n;
}

__attribute__((noinline)) static void burn_task(void *arg)
{
    struct burn_run *run = arg;
    struct task *self = task_current();
    uint64_t x = cpu_index(), n = 0;
    int64_t next_request = time_ns();
    while (time_ns() - run->deadline_ns < 0) {
        if (run->spans && time_ns() - next_request >= 0) {
            begin_request(self, false);
            next_request += (int64_t)BURN_SPAN_MS * 1000000;
        }
        if (run->irqsoff) {
            int64_t until = time_ns() + (int64_t)BURN_IRQSOFF_SLICE_MS * 1000000;
            n += burn_irqsoff_slice(&x, until - run->deadline_ns < 0 ? until : run->deadline_ns);
            continue;
        }
        x = burn_outer(x); /* one call site: one chain */
        n++;
    }
    if (run->spans)
        begin_request(self, true);
    atomic_fetch_add(&run->iterations, n);
    if (atomic_fetch_sub(&run->running, 1) == 1) {
        last_run.tasks = run->tasks;
        last_run.ms = run->ms;
        last_run.iterations = atomic_load(&run->iterations);
        last_run.elapsed_ns = time_ns() - run->start_ns;
        last_run.valid = true;
        atomic_store(&run_active, false);
    }
}

/* `burn spans FROM`: up to BURN_SPANS_PER_READ whole entries from FROM on, "span PID SPAN BEFORE_NS AFTER_NS",
 * then "burn spans: next N lost M" -- where to read on, and how many entries from FROM were overwritten before
 * this read (a reader that falls behind is told, never given a shorter log). */
static int print_spans(struct sink *out, uint64_t from)
{
    uint64_t next = atomic_load(&span_log_next);
    uint64_t lost = 0;
    if (from > next)
        from = next;
    if (next - from > BURN_SPAN_LOG - BURN_SPANS_PER_READ) {
        lost = next - from - (BURN_SPAN_LOG - BURN_SPANS_PER_READ);
        from += lost;
    }
    uint64_t i = from;
    for (; i < next && i - from < BURN_SPANS_PER_READ; i++) {
        struct span_entry *e = &span_log[i % BURN_SPAN_LOG];
        if (atomic_load_explicit(&e->seq, memory_order_acquire) != i + 1)
            break; /* still being written: the next read starts here */
        struct span_entry copy = { 0, e->pid, e->span, e->before_ns, e->after_ns };
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&e->seq, memory_order_relaxed) != i + 1)
            break;
        sink_printf(out, "span %u %llu %lld %lld\n", copy.pid, (unsigned long long)copy.span,
                    (long long)copy.before_ns, (long long)copy.after_ns);
    }
    sink_printf(out, "burn spans: next %llu lost %llu\n", (unsigned long long)i, (unsigned long long)lost);
    return 0;
}

int cmd_burn(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (argc >= 2 && strcmp(argv[1], "spans") == 0) {
        uint64_t start = 0;
        if (argc > 3 || (argc == 3 && !parse_u64(argv[2], &start)))
            return shell_usage(out, "burn");
        return print_spans(out, start);
    }
    if (argc == 1) {
        if (atomic_load(&run_active))
            sink_printf(out, "burn: %u tasks running\n", atomic_load(&current_run.running));
        else if (!last_run.valid)
            sink_puts(out, "burn: no run finished yet\n");
        else {
            uint64_t ms = (uint64_t)(last_run.elapsed_ns / 1000000);
            sink_printf(out, "burn: last run %u tasks, %llu iterations in %llu ms, %llu iterations/s\n",
                        last_run.tasks, (unsigned long long)last_run.iterations, (unsigned long long)ms,
                        (unsigned long long)(ms ? last_run.iterations * 1000 / ms : 0));
        }
        return 0;
    }
    uint64_t ms, n = 1;
    bool irqsoff = argc == 4 && strcmp(argv[3], "irqsoff") == 0;
    bool spans = argc == 4 && strcmp(argv[3], "spans") == 0;
    if (argc > 4 || (argc == 4 && !irqsoff && !spans) || !parse_u64_range(argv[1], 1, BURN_MAX_MS, &ms) ||
        (argc >= 3 && !parse_u64_range(argv[2], 1, BURN_MAX_TASKS, &n)))
        return shell_usage(out, "burn");
    bool idle = false;
    if (!atomic_compare_exchange_strong(&run_active, &idle, true)) {
        sink_puts(out, "burn: busy (a run is in progress)\n");
        return 1;
    }
    current_run.start_ns = time_ns();
    current_run.deadline_ns = current_run.start_ns + (int64_t)ms * 1000000;
    current_run.tasks = (unsigned)n;
    current_run.ms = (uint32_t)ms;
    current_run.irqsoff = irqsoff;
    current_run.spans = spans;
    atomic_store(&current_run.iterations, 0);
    atomic_store(&current_run.running, (unsigned)n);

    sink_printf(out, "burn: started %llu tasks for %llu ms%s (pids", (unsigned long long)n, (unsigned long long)ms,
                irqsoff ? " with interrupts off" : spans ? " with a new span every 100 ms" : "");
    unsigned started = 0;
    for (unsigned i = 0; i < n; i++) {
        struct task *t = task_spawn("burn", burn_task, &current_run, -1);
        if (!t)
            break;
        started++;
        sink_printf(out, " %u", t->pid);
    }
    sink_puts(out, ")\n");
    if (started < n) {
        sink_printf(out, "burn: only %u of %llu tasks could be started\n", started, (unsigned long long)n);
        /* The ones that never started will never count down. */
        if (atomic_fetch_sub(&current_run.running, (unsigned)n - started) == (unsigned)n - started)
            atomic_store(&run_active, false);
    }
    return started ? 0 : 1;
}
