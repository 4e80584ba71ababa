/* kernel/workload/work.c: the `work` workload's run (kernel/workload/work.h) -- its start, its tasks' request
 * loop with the compute chain a profile can recognise (work_task -> work_serve_request -> work_compute ->
 * work_compute_step while computing; work_serve_request -> work_wait -> task_wait_until while waiting), the
 * tasks' own log, and the run's end. One run at a time; its figures sit under one lock that the tasks take once
 * per request and `work` once per report, so a report's figures are each task's as of one request's end. */
#include "kernel/workload/work.h"

#include <stdatomic.h>

#include "hal/compiler.h"
#include "hal/cpu.h"
#include "hal/spinlock.h"
#include "kernel/labels.h"
#include "kernel/task.h"
#include "kernel/workload/span_log.h"

/* The spans of the last WORK_SPANS_KEPT requests stay readable, and a page being printed has its room. */
static struct span_entry span_entries[WORK_SPANS_KEPT + SPAN_LOG_PER_READ];
static struct span_log span_log = SPAN_LOG_OVER(span_entries);

/* The run going on, or the last one. params, deadline and labels are written before the tasks are spawned and
 * only read by them; log is under run_lock. */
static struct {
    int64_t start_ns;
    int64_t deadline_ns;
    int64_t end_ns;                  /* when its last task left its loop */
    const struct label_set *labels;  /* work=serve, the run's reference; NULL: the tasks run unlabelled */
    atomic_uint running;             /* tasks still in their loop (and those about to be spawned) */
    bool valid;                      /* a run has been started since boot */
    struct work_run_log log;
} run;
static spinlock_t run_lock = SPINLOCK_INIT;
static atomic_bool run_active;

/* The chain is kept out of line on purpose: a profile must see each level as a frame. Nearly all the compute
 * is work_compute_step's loop, kept a loop (not unrolled) as burn_inner's is, so that TCG's translated blocks do
 * not bias where its samples land; it is a function of its own rather than burn_inner so that a profile tells
 * work's computing from burn's by the leaf alone. */
__attribute__((noinline)) static uint64_t work_compute_step(uint64_t x)
{
#ifdef __clang__ /* the kernel's compiler; the unit tests build this file with the host's gcc */
#pragma clang loop unroll(disable)
#endif
    for (int i = 0; i < 4096; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        OPTIMIZER_HIDE_VALUE(x);
    }
    return x;
}

/* Computes until until_ns: a time, not an amount of work, so a phase is as long as planned however fast the
 * CPU (or TCG on a loaded host) runs, give or take one step. */
__attribute__((noinline)) static uint64_t work_compute(uint64_t x, int64_t until_ns)
{
    while (time_ns() - until_ns < 0)
        x = work_compute_step(x);
    return x;
}

/* Waits on the timer until until_ns (not at all when the request is already late). */
__attribute__((noinline)) static void work_wait(int64_t until_ns)
{
    if (time_ns() - until_ns < 0)
        task_wait_until(until_ns, TASK_WAIT_TIMER);
}

/* One request, begun at start_ns (the end of the one before): a span of its own for its whole life, compute
 * until compute_until_ns, wait until wait_until_ns, then the span cleared and the request logged. Returns when
 * it ended, the next request's start. */
__attribute__((noinline)) static int64_t work_serve_request(struct task *self, uint32_t slot, int64_t start_ns,
                                                            int64_t compute_until_ns, int64_t wait_until_ns,
                                                            uint64_t *x)
{
    uint64_t span = span_new();
    task_set_span(self, span);
    *x = work_compute(*x, compute_until_ns);
    int64_t computed_ns = time_ns();
    work_wait(wait_until_ns);
    int64_t end_ns = time_ns();
    task_set_span(self, 0);

    int64_t compute_ns = computed_ns - start_ns, wait_ns = end_ns - computed_ns;
    unsigned long flags = spin_lock_irqsave(&run_lock);
    work_log_request(&run.log.task[slot], compute_ns, wait_ns);
    spin_unlock_irqrestore(&run_lock, flags);
    span_log_add(&span_log, self->pid, span, compute_ns, wait_ns);
    return end_ns;
}

static int64_t earlier(int64_t a, int64_t b)
{
    return a - b < 0 ? a : b;
}

/* The end of the run, by whoever leaves it last: a task, or the start when some tasks never began. */
static void run_finished(int64_t end_ns)
{
    unsigned long flags = spin_lock_irqsave(&run_lock);
    run.end_ns = end_ns;
    run.log.running = false;
    spin_unlock_irqrestore(&run_lock, flags);
    label_release(run.labels);
    run.labels = 0;
    atomic_store(&run_active, false);
}

/* Requests begin while the run's deadline is ahead, and every phase ends by it, so each task's loop lasts the
 * run's MS (its last request cut short). A request that starts late -- the task was held off, or the one before
 * ran long -- still computes its full share and waits only for what is left of its period: a server working
 * through its queue, which keeps the run's compute share at COMPUTE%. */
__attribute__((noinline)) static void work_task(void *arg)
{
    uint32_t slot = (uint32_t)(uintptr_t)arg;
    struct task *self = task_current();
    if (run.labels)
        task_set_labels(self, run.labels);
    uint32_t compute_pct = run.log.params.compute_pct;
    int64_t deadline = run.deadline_ns;
    int64_t now = time_ns();
    struct work_schedule schedule;
    work_schedule_init(&schedule, now, run.log.params.period_ms, slot); /* the slot's seed: a run replays */
    int64_t arrival = work_schedule_next(&schedule);
    uint64_t x = slot;
    while (now - deadline < 0) {
        int64_t next_arrival = work_schedule_next(&schedule);
        int64_t compute_ns = work_compute_ns(next_arrival - arrival, compute_pct);
        now = work_serve_request(self, slot, now, earlier(now + compute_ns, deadline), earlier(next_arrival, deadline),
                                 &x);
        arrival = next_arrival;
    }
    task_set_labels(self, 0);
    if (atomic_fetch_sub(&run.running, 1) == 1)
        run_finished(now);
}

bool work_start(const struct work_params *p, uint32_t pids[WORK_MAX_TASKS], uint32_t *started,
                const char **unlabelled_why)
{
    *started = 0;
    *unlabelled_why = 0;
    bool idle = false;
    if (!atomic_compare_exchange_strong(&run_active, &idle, true))
        return false;
    unsigned long flags = spin_lock_irqsave(&run_lock);
    run.start_ns = time_ns();
    run.deadline_ns = run.start_ns + (int64_t)p->ms * 1000000;
    run.end_ns = run.start_ns;
    run.valid = true;
    run.log = (struct work_run_log){ .params = *p, .tasks = p->tasks, .running = true,
                                     .first_span = span_log_next(&span_log) };
    spin_unlock_irqrestore(&run_lock, flags);
    run.labels = label_intern_one("work", "serve", unlabelled_why);
    atomic_store(&run.running, p->tasks);

    uint32_t n = 0;
    for (; n < p->tasks; n++) {
        struct task *t = task_spawn("work", work_task, (void *)(uintptr_t)n, -1);
        if (!t)
            break;
        pids[n] = t->pid;
        flags = spin_lock_irqsave(&run_lock);
        run.log.task[n].pid = t->pid;
        spin_unlock_irqrestore(&run_lock, flags);
    }
    *started = n;
    if (n < p->tasks) {
        flags = spin_lock_irqsave(&run_lock);
        run.log.tasks = n;
        spin_unlock_irqrestore(&run_lock, flags);
        /* The ones that never started will never count down. */
        if (atomic_fetch_sub(&run.running, p->tasks - n) == p->tasks - n)
            run_finished(time_ns());
    }
    return true;
}

bool work_last_run(struct work_run_log *out)
{
    int64_t now = time_ns();
    unsigned long flags = spin_lock_irqsave(&run_lock);
    bool valid = run.valid;
    *out = run.log;
    out->elapsed_ns = (out->running ? now : run.end_ns) - run.start_ns;
    spin_unlock_irqrestore(&run_lock, flags);
    return valid;
}

void work_spans_print(uint64_t from, struct sink *out)
{
    span_log_print(&span_log, from, "work", out);
}
