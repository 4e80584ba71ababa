/* kernel/shell/cmd_lockfight.c: the `lockfight` command, a test load with a known answer for the lock profile --
 * N tasks, spread over the CPUs, that for MS ms take one spinlock over and over, each holding it a few
 * microseconds (as a short critical section does) and then working as long again without it, so that CPUs find
 * it held and spin. Every wait is counted under one chain, the lock's call site in lockfight_round, then
 * lockfight_task: `locks` and /debug/pprof/mutex should put it first. `lockfight` alone says whether a run is on
 * and what the last one did. */
#include <stdatomic.h>

#include "hal/cpu.h"
#include "hal/spinlock.h"
#include "kernel/lib/parse.h"
#include "kernel/shell/commands.h"
#include "kernel/task.h"

#define LOCKFIGHT_MAX_TASKS 16
#define LOCKFIGHT_MAX_MS 60000
#define LOCKFIGHT_HOLD_NS 5000 /* inside the lock, and as long again outside it */

static spinlock_t fought_over = SPINLOCK_INIT;

static struct {
    int64_t deadline_ns;
    int64_t start_ns;
    atomic_uint running;
    atomic_ullong rounds;
    unsigned tasks;
} run;
static atomic_bool run_active;

/* The last finished run, for `lockfight` alone. */
static struct {
    bool valid;
    unsigned tasks;
    uint64_t rounds;
    int64_t elapsed_ns;
} last_run;

static void busy_for(int64_t ns)
{
    int64_t until = time_ns() + ns;
    while (time_ns() - until < 0)
        cpu_relax();
}

/* One round: the lock taken here, at one call site, so every wait of the run has one chain. */
__attribute__((noinline)) static void lockfight_round(void)
{
    unsigned long flags = spin_lock_irqsave(&fought_over);
    busy_for(LOCKFIGHT_HOLD_NS);
    spin_unlock_irqrestore(&fought_over, flags);
    busy_for(LOCKFIGHT_HOLD_NS);
}

__attribute__((noinline)) static void lockfight_task(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    while (time_ns() - run.deadline_ns < 0) {
        lockfight_round();
        n++;
    }
    atomic_fetch_add(&run.rounds, n);
    if (atomic_fetch_sub(&run.running, 1) == 1) {
        last_run.tasks = run.tasks;
        last_run.rounds = atomic_load(&run.rounds);
        last_run.elapsed_ns = time_ns() - run.start_ns;
        last_run.valid = true;
        atomic_store(&run_active, false);
    }
}

static int report(struct sink *out)
{
    if (atomic_load(&run_active))
        sink_printf(out, "lockfight: %u tasks running\n", atomic_load(&run.running));
    else if (!last_run.valid)
        sink_puts(out, "lockfight: no run finished yet\n");
    else
        sink_printf(out, "lockfight: last run %u tasks, %llu rounds in %lld ms\n", last_run.tasks,
                    (unsigned long long)last_run.rounds, (long long)(last_run.elapsed_ns / 1000000));
    return 0;
}

int cmd_lockfight(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (argc == 1)
        return report(out);
    uint64_t ms, n;
    if (argc != 3 || !parse_u64_range(argv[1], 1, LOCKFIGHT_MAX_MS, &ms) ||
        !parse_u64_range(argv[2], 2, LOCKFIGHT_MAX_TASKS, &n))
        return shell_usage(out, "lockfight");
    bool idle = false;
    if (!atomic_compare_exchange_strong(&run_active, &idle, true)) {
        sink_puts(out, "lockfight: busy (a run is in progress)\n");
        return 1;
    }
    run.start_ns = time_ns();
    run.deadline_ns = run.start_ns + (int64_t)ms * 1000000;
    run.tasks = (unsigned)n;
    atomic_store(&run.rounds, 0);
    atomic_store(&run.running, (unsigned)n);
    sink_printf(out, "lockfight: started %llu tasks for %llu ms on one spinlock (pids", (unsigned long long)n,
                (unsigned long long)ms);
    /* round the CPUs: the fight is between CPUs, not tasks taking turns on one */
    unsigned started = shell_start_tasks(out, "lockfight", lockfight_task, 0, (unsigned)n, true);
    /* the ones that never started will never count down */
    if (started < n && atomic_fetch_sub(&run.running, (unsigned)n - started) == (unsigned)n - started)
        atomic_store(&run_active, false);
    return started ? 0 : 1;
}
