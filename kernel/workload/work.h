/* kernel/workload/work.h: `work`, a request-serving workload whose split of compute and wait is known and
 * measured -- the ground truth a wall-clock profile is checked against, task by task and span by span. A run
 * starts N tasks (labelled work=serve) that for MS ms serve requests arriving every PERIOD ms on average (each
 * arrival jittered uniformly within +-WORK_JITTER_PCT% of PERIOD from a per-task generator seeded by the task's
 * slot, so a run replays and the arrivals are not phase-locked to the 10 ms tick). Each request is a span of its
 * own, set on the task for the request's whole life: it computes (work_compute) for COMPUTE% of its period, then
 * waits on the timer until the next arrival. The tasks log what they did, measured with time_ns() around each
 * phase: per task, requests served and the compute and wait nanoseconds, which add up to the time the task spent
 * in its request loop; per span, its compute and wait, in a span log (kernel/workload/span_log.h) that keeps the
 * last WORK_SPANS_KEPT.
 *
 * kernel/workload/work.c runs it (the tasks and the run's life); kernel/workload/work_log.c is the part with no
 * task in it, tested on the host: the arguments, the arrival schedule, the per-task accounting and the report. */
#ifndef KERNEL_WORKLOAD_WORK_H
#define KERNEL_WORKLOAD_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/lib/sink.h"

#define WORK_MAX_TASKS 16
#define WORK_MAX_MS 60000
#define WORK_MAX_PERIOD_MS 10000
#define WORK_DEFAULT_COMPUTE_PCT 30
#define WORK_DEFAULT_PERIOD_MS 100
#define WORK_JITTER_PCT 10   /* an arrival lands within +-10% of PERIOD of its place on the grid */
#define WORK_SPANS_KEPT 2048 /* the span log keeps the last 2048 requests' spans: 51 s of 4 tasks at 10 a second */

/* What a run is asked: `work MS N [COMPUTE [PERIOD]]`. */
struct work_params {
    uint32_t ms;          /* 1..WORK_MAX_MS: requests start only before the run's deadline, and end by it */
    uint32_t tasks;       /* 1..WORK_MAX_TASKS */
    uint32_t compute_pct; /* 0..100: the share of each request's period spent computing */
    uint32_t period_ms;   /* 1..WORK_MAX_PERIOD_MS: the mean time between two requests' arrivals */
};

/* One task's own account of its request loop. compute_ns + wait_ns is exactly the time from the loop's start to
 * the end of its last request: each phase is timed from the end of the one before, so the loop's own overhead
 * (setting the span, logging) falls into the next request's compute rather than between the phases. Both are
 * wall time on the kernel's clock, as a wall profile sees it: a compute phase includes any stretch its CPU ran
 * another task meanwhile (the task runnable, not running), and a wait the stretch from the timer's expiry to
 * the task's running again (the tick wakes a sleeper, so up to one tick late). */
struct work_task_log {
    uint32_t pid;
    uint64_t requests; /* served to the end (the last one cut at the deadline is counted) */
    int64_t compute_ns;
    int64_t wait_ns;
};

/* A run as `work` reports it: a copy taken under the run's lock (work_last_run). */
struct work_run_log {
    struct work_params params;
    uint32_t tasks;      /* started: params.tasks unless the task table ran out */
    bool running;        /* false once every task has left its loop */
    int64_t elapsed_ns;  /* since the run started: up to now while it runs, to its last task's end after */
    uint64_t first_span; /* the span log's index of the run's first entry: where `work spans` starts reading */
    struct work_task_log task[WORK_MAX_TASKS];
};

/* ---- work_log.c: no task in it ---- */

/* The words after `work`: MS N [COMPUTE [PERIOD]], each a number (parse_u64) in its range. False on anything
 * else (*out is then unspecified). */
bool work_params_parse(int argc, char *const argv[], struct work_params *out);

/* When a task's requests arrive: the first at origin, the i-th at origin + i * period + a jitter drawn uniformly
 * from [-period * WORK_JITTER_PCT / 100, +...] -- on average one every period, never two at once (two arrivals
 * are at least 80% of a period apart), and the same sequence for the same seed. */
struct work_schedule {
    uint64_t state; /* the generator's (splitmix64) */
    int64_t origin_ns;
    int64_t period_ns;
    uint64_t given; /* arrivals handed out so far */
};
void work_schedule_init(struct work_schedule *s, int64_t origin_ns, uint32_t period_ms, uint64_t seed);
int64_t work_schedule_next(struct work_schedule *s);
/* The nanoseconds a request whose period is period_ns computes: compute_pct percent of it. */
int64_t work_compute_ns(int64_t period_ns, uint32_t compute_pct);

/* One request served: its compute and wait added to the task's account. */
void work_log_request(struct work_task_log *log, int64_t compute_ns, int64_t wait_ns);

/* "4 tasks for 2000 ms, a request every 100 ms computing 30% of it": what a run does, for the start line and
 * the report's header. tasks is the number to say (asked or started). */
void work_describe(const struct work_params *p, uint32_t tasks, struct sink *out);

/* The report of `work` alone:
 *   work: 4 tasks for 2000 ms, a request every 100 ms computing 30% of it: finished in 2004 ms   (or: running)
 *   pid 7: 20 requests, compute 601 ms, wait 1399 ms (30% computing)                              (one per task)
 *   total: 80 requests, compute 2404 ms, wait 5596 ms (30% computing)
 * Milliseconds are whole (truncated from the nanoseconds); the share is compute over compute + wait, rounded
 * to the nearest percent (0 for a task that has served nothing). */
void work_report(const struct work_run_log *run, struct sink *out);

/* ---- work.c: the run ---- */

/* Starts a run of p->tasks tasks on any CPU: pids[] gets the pids of those started (*started of them; fewer
 * than asked only when the task table is full). False, and nothing started, while a run is going. When the
 * label set work=serve cannot be made, the tasks run unlabelled and *unlabelled_why says why (else NULL).
 * Task context. */
bool work_start(const struct work_params *p, uint32_t pids[WORK_MAX_TASKS], uint32_t *started,
                const char **unlabelled_why);

/* A copy of the run going on, or of the last one; false before the first run. Task context. */
bool work_last_run(struct work_run_log *out);

/* `work spans FROM`: the span log from index FROM, a page of "span PID SPAN COMPUTE_NS WAIT_NS" lines (one
 * per request, written when it ends) and "work spans: next N lost M" (span_log_print). */
void work_spans_print(uint64_t from, struct sink *out);

#endif
