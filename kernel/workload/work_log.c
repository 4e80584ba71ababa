/* kernel/workload/work_log.c: the part of `work` (kernel/workload/work.h) with no task in it, so the host's
 * unit tests run it as the kernel does: a run's arguments, when its requests arrive, each task's account of its
 * requests, and the report `work` prints from a copy of the run. */
#include "kernel/workload/work.h"

#include "kernel/lib/parse.h"

bool work_params_parse(int argc, char *const argv[], struct work_params *out)
{
    uint64_t ms, tasks, compute = WORK_DEFAULT_COMPUTE_PCT, period = WORK_DEFAULT_PERIOD_MS;
    if (argc < 2 || argc > 4)
        return false;
    if (!parse_u64_range(argv[0], 1, WORK_MAX_MS, &ms) || !parse_u64_range(argv[1], 1, WORK_MAX_TASKS, &tasks))
        return false;
    if (argc >= 3 && !parse_u64_range(argv[2], 0, 100, &compute))
        return false;
    if (argc == 4 && !parse_u64_range(argv[3], 1, WORK_MAX_PERIOD_MS, &period))
        return false;
    out->ms = (uint32_t)ms;
    out->tasks = (uint32_t)tasks;
    out->compute_pct = (uint32_t)compute;
    out->period_ms = (uint32_t)period;
    return true;
}

/* splitmix64: one add and a mix per number, every seed (0 included) good, and nothing to keep but a word --
 * a small generator that replays exactly, which is all the jitter needs. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void work_schedule_init(struct work_schedule *s, int64_t origin_ns, uint32_t period_ms, uint64_t seed)
{
    s->state = seed;
    s->origin_ns = origin_ns;
    s->period_ns = (int64_t)period_ms * 1000000;
    s->given = 0;
}

int64_t work_schedule_next(struct work_schedule *s)
{
    uint64_t i = s->given++;
    if (i == 0)
        return s->origin_ns; /* the first request is there when the task starts */
    /* Jittered about the grid rather than from the last arrival, so the mean stays exactly one per period however
     * long the run; the modulo's bias is below 2^-22 even at the longest period allowed. */
    int64_t reach = s->period_ns * WORK_JITTER_PCT / 100;
    int64_t jitter = (int64_t)(next_random(&s->state) % (uint64_t)(2 * reach + 1)) - reach;
    return s->origin_ns + (int64_t)i * s->period_ns + jitter;
}

int64_t work_compute_ns(int64_t period_ns, uint32_t compute_pct)
{
    return period_ns * (int64_t)compute_pct / 100;
}

void work_log_request(struct work_task_log *log, int64_t compute_ns, int64_t wait_ns)
{
    log->requests++;
    log->compute_ns += compute_ns;
    log->wait_ns += wait_ns;
}

void work_describe(const struct work_params *p, uint32_t tasks, struct sink *out)
{
    sink_printf(out, "%u tasks for %u ms, a request every %u ms computing %u%% of it", tasks, p->ms, p->period_ms,
                p->compute_pct);
}

/* compute as a whole percent of compute + wait, rounded to the nearest. */
static unsigned computing_pct(int64_t compute_ns, int64_t wait_ns)
{
    int64_t total = compute_ns + wait_ns;
    return total > 0 ? (unsigned)((compute_ns * 100 + total / 2) / total) : 0;
}

static void account_line(struct sink *out, uint64_t requests, int64_t compute_ns, int64_t wait_ns)
{
    sink_printf(out, "%llu requests, compute %lld ms, wait %lld ms (%u%% computing)\n", (unsigned long long)requests,
                (long long)(compute_ns / 1000000), (long long)(wait_ns / 1000000), computing_pct(compute_ns, wait_ns));
}

void work_report(const struct work_run_log *run, struct sink *out)
{
    sink_puts(out, "work: ");
    work_describe(&run->params, run->tasks, out);
    if (run->running)
        sink_puts(out, ": running\n");
    else
        sink_printf(out, ": finished in %lld ms\n", (long long)(run->elapsed_ns / 1000000));
    uint64_t requests = 0;
    int64_t compute_ns = 0, wait_ns = 0;
    for (uint32_t i = 0; i < run->tasks && i < WORK_MAX_TASKS; i++) {
        const struct work_task_log *t = &run->task[i];
        sink_printf(out, "pid %u: ", t->pid);
        account_line(out, t->requests, t->compute_ns, t->wait_ns);
        requests += t->requests;
        compute_ns += t->compute_ns;
        wait_ns += t->wait_ns;
    }
    sink_puts(out, "total: ");
    account_line(out, requests, compute_ns, wait_ns);
}
