/* kernel/shell/cmd_burn.c: the `burn` command -- busy tasks that spin through a fixed, known call chain
 * (burn_task -> burn_outer -> burn_middle -> burn_inner) for a given time, so that a profile has a known
 * answer and tests and benchmarks have a load whose throughput they can measure. `burn MS N irqsoff` runs the
 * same chain with interrupts disabled in slices of BURN_IRQSOFF_SLICE_MS (under burn_irqsoff_slice), so the
 * counter's NMI has interrupts-off code to mark and the tick has something to be held off by, while the
 * console and gdb still get in between slices. `burn MS N spans` makes each task a server of requests: every
 * BURN_SPAN_MS it starts a new one, with a new span (kernel/labels.h's numeric label, set without interning
 * anything), and logs the span and when it began in a span log (kernel/workload/span_log.h, shared with `work`);
 * `burn spans FROM` reads that log back, so a test can check every sample's span against what was current when
 * the sample was taken. `burn stop` ends a run now (its deadline brought forward), so a test can run a load as
 * long as it needs it and no longer, and the next test need not wait out what it did not use. */
#include <stdatomic.h>

#include "hal/compiler.h"
#include "hal/cpu.h"
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"
#include "kernel/workload/span_log.h"

#define BURN_MAX_TASKS 16
#define BURN_MAX_MS 60000
#define BURN_IRQSOFF_SLICE_MS 20
#define BURN_SPAN_MS 100       /* a request's length under `spans` */
#define BURN_SPAN_LOG 8192     /* entries kept: 20 s of 4 tasks; a reader reads on before they are overwritten */

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

/* The span log of every task of `burn ... spans`: the span and the clock just before and just after the task's
 * span word changed (a sample taken between the two may carry either span). */
static struct span_entry span_entries[BURN_SPAN_LOG];
static struct span_log span_log = SPAN_LOG_OVER(span_entries);

/* A new request: a new span (0: the task is done), published with one store (no interning), and logged. */
static void begin_request(struct task *self, bool last)
{
    uint64_t span = last ? 0 : span_new();
    int64_t before = time_ns();
    task_set_span(self, span);
    int64_t after = time_ns();
    span_log_add(&span_log, self->pid, span, before, after);
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
    int64_t deadline;
    /* the deadline read afresh each time round: `burn stop` brings it forward from the shell's task */
    while (time_ns() - (deadline = __atomic_load_n(&run->deadline_ns, __ATOMIC_RELAXED)) < 0) {
        if (run->spans && time_ns() - next_request >= 0) {
            begin_request(self, false);
            next_request += (int64_t)BURN_SPAN_MS * 1000000;
        }
        if (run->irqsoff) {
            int64_t until = time_ns() + (int64_t)BURN_IRQSOFF_SLICE_MS * 1000000;
            n += burn_irqsoff_slice(&x, until - deadline < 0 ? until : deadline);
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

int cmd_burn(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (argc >= 2 && strcmp(argv[1], "spans") == 0) {
        uint64_t start = 0;
        if (argc > 3 || (argc == 3 && !parse_u64(argv[2], &start)))
            return shell_usage(out, "burn");
        span_log_print(&span_log, start, "burn", out);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "stop") == 0) {
        if (atomic_load(&run_active)) {
            __atomic_store_n(&current_run.deadline_ns, time_ns(), __ATOMIC_RELAXED);
            sink_printf(out, "burn: stopping %u tasks\n", atomic_load(&current_run.running));
        } else {
            sink_puts(out, "burn: no run going\n");
        }
        return 0;
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
    unsigned started = shell_start_tasks(out, "burn", burn_task, &current_run, (unsigned)n, false);
    /* The ones that never started will never count down. */
    if (started < n && atomic_fetch_sub(&current_run.running, (unsigned)n - started) == (unsigned)n - started)
        atomic_store(&run_active, false);
    return started ? 0 : 1;
}
