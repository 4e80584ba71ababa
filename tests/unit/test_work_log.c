/* tests/unit/test_work_log.c: the part of `work` with no task in it (kernel/workload/work_log.c) -- its words
 * (MS N [COMPUTE [PERIOD]], each in its range, defaults 30% and 100 ms, anything else refused), the requests'
 * arrival schedule (the first at the start, then one per period on average, each within +-10% of its place on
 * the grid, at least 80% of a period apart, the same for the same seed and different for another), a request's
 * compute share, each task's account, and the report's exact text: the header running or finished, one line per
 * task, the total, whole milliseconds and the nearest percent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shell_line.h"
#include "unit_main.h"
#include "kernel/lib/sink.h"
#include "kernel/workload/work.h"

#define MS 1000000ll

/* work_params_parse of the words of line (those after `work`). */
static bool parse(const char *line, struct work_params *p)
{
    char *argv[SHELL_LINE_WORDS];
    int argc = shell_line_split(line, argv);
    memset(p, 0x5a, sizeof *p); /* what a refusal leaves must not matter, what a success leaves must be set */
    return work_params_parse(argc, argv, p);
}

static void expect_params(const char *line, uint32_t ms, uint32_t tasks, uint32_t compute_pct, uint32_t period_ms)
{
    struct work_params p;
    if (!parse(line, &p))
        fail_msg("work %s: refused", line);
    if (p.ms != ms || p.tasks != tasks || p.compute_pct != compute_pct || p.period_ms != period_ms)
        fail_msg("work %s: %u %u %u %u", line, p.ms, p.tasks, p.compute_pct, p.period_ms);
}

static void test_words(void **state)
{
    (void)state;
    expect_params("2000 4", 2000, 4, 30, 100);
    expect_params("2000 4 50", 2000, 4, 50, 100);
    expect_params("2000 4 50 250", 2000, 4, 50, 250);
    expect_params("1 1 0 1", 1, 1, 0, 1);
    expect_params("60000 16 100 10000", 60000, 16, 100, 10000);
    static const char *const bad[] = {
        "", "2000", "0 4", "60001 4", "2000 0", "2000 17", "2000 4 101", "2000 4 30 0", "2000 4 30 10001",
        "2000 4 30 100 7", "-1 4", "2000 -4", "2000 4 x", "2000 4 30 1e2", "2k 4", "2000 4.0",
    };
    struct work_params p;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (parse(bad[i], &p))
            fail_msg("work %s: accepted", bad[i]);
}

static void test_first_request_arrives_at_the_start(void **state)
{
    (void)state;
    struct work_schedule s;
    work_schedule_init(&s, 12345, 100, 7);
    assert_int_equal(work_schedule_next(&s), 12345);
}

static void test_arrivals_keep_to_the_grid_within_the_jitter(void **state)
{
    (void)state;
    const int64_t origin = 5 * MS, period = 100 * MS, reach = period * WORK_JITTER_PCT / 100;
    struct work_schedule s;
    work_schedule_init(&s, origin, 100, 3);
    int64_t last = work_schedule_next(&s), min_gap = INT64_MAX, max_gap = 0, early = 0, late = 0;
    const int n = 10000;
    for (int i = 1; i <= n; i++) {
        int64_t t = work_schedule_next(&s);
        int64_t off = t - (origin + i * period);
        assert_true(off >= -reach && off <= reach);
        early += off < -reach / 2;
        late += off > reach / 2;
        min_gap = t - last < min_gap ? t - last : min_gap;
        max_gap = t - last > max_gap ? t - last : max_gap;
        last = t;
    }
    /* never two at once, however the jitter falls */
    assert_true(min_gap >= period - 2 * reach && max_gap <= period + 2 * reach);
    /* spread over the whole window rather than stuck on the grid: a quarter each way on average */
    assert_in_range(early, n / 5, n * 3 / 10);
    assert_in_range(late, n / 5, n * 3 / 10);
    /* one per period on average, exactly: the n-th is within the jitter of n periods */
    assert_true(last - origin >= n * period - reach && last - origin <= n * period + reach);
}

static void test_the_same_seed_replays_and_another_does_not(void **state)
{
    (void)state;
    struct work_schedule a, b, c;
    work_schedule_init(&a, 0, 100, 1);
    work_schedule_init(&b, 0, 100, 1);
    work_schedule_init(&c, 0, 100, 2);
    int same = 0;
    for (int i = 0; i < 100; i++) {
        int64_t ta = work_schedule_next(&a), tb = work_schedule_next(&b), tc = work_schedule_next(&c);
        assert_int_equal(ta, tb);
        same += ta == tc;
    }
    assert_int_equal(same, 1); /* only the first, which has no jitter */
}

static void test_a_period_of_one_ms_still_jitters(void **state)
{
    (void)state;
    struct work_schedule s;
    work_schedule_init(&s, 0, 1, 0);
    work_schedule_next(&s);
    int64_t t1 = work_schedule_next(&s), t2 = work_schedule_next(&s);
    assert_in_range(t1, 900000, 1100000);
    assert_in_range(t2, 1900000, 2100000);
    assert_true(t1 != 1000000 || t2 != 2000000);
}

static void test_compute_share_of_a_period(void **state)
{
    (void)state;
    assert_int_equal(work_compute_ns(100 * MS, 30), 30 * MS);
    assert_int_equal(work_compute_ns(93 * MS, 30), 27900000);
    assert_int_equal(work_compute_ns(100 * MS, 0), 0);
    assert_int_equal(work_compute_ns(100 * MS, 100), 100 * MS);
    /* the longest period, jittered late, at 100%: no overflow */
    assert_int_equal(work_compute_ns(11000 * MS, 100), 11000 * MS);
}

static void test_each_request_adds_to_the_task_account(void **state)
{
    (void)state;
    struct work_task_log t = { .pid = 9 };
    work_log_request(&t, 30 * MS, 70 * MS);
    work_log_request(&t, 31 * MS + 5, 0);
    assert_int_equal(t.requests, 2);
    assert_int_equal(t.compute_ns, 61 * MS + 5);
    assert_int_equal(t.wait_ns, 70 * MS);
    assert_int_equal(t.pid, 9);
}

static const char *report_of(const struct work_run_log *run)
{
    static char text[2048];
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    work_report(run, &bs.sink);
    assert_int_equal(bs.truncated, 0);
    return text;
}

static void test_report_of_a_finished_run(void **state)
{
    (void)state;
    struct work_run_log run = {
        .params = { 2000, 3, 30, 100 }, .tasks = 3, .running = false, .elapsed_ns = 2004 * MS + 999999,
        .task = {
            { 7, 20, 601 * MS + 999999, 1399 * MS },  /* whole ms truncated: 601 */
            { 8, 21, 594 * MS, 1406 * MS },           /* 29.7%: 30 */
            { 9, 19, 589 * MS, 1411 * MS },           /* 29.45%: 29 */
        },
    };
    assert_string_equal(report_of(&run),
                        "work: 3 tasks for 2000 ms, a request every 100 ms computing 30% of it: finished in 2004 ms\n"
                        "pid 7: 20 requests, compute 601 ms, wait 1399 ms (30% computing)\n"
                        "pid 8: 21 requests, compute 594 ms, wait 1406 ms (30% computing)\n"
                        "pid 9: 19 requests, compute 589 ms, wait 1411 ms (29% computing)\n"
                        "total: 60 requests, compute 1784 ms, wait 4216 ms (30% computing)\n");
}

static void test_report_of_a_run_going_on(void **state)
{
    (void)state;
    /* a task that has served nothing yet computes 0%, not a division by zero */
    struct work_run_log run = {
        .params = { 60000, 2, 0, 250 }, .tasks = 2, .running = true, .elapsed_ns = 300 * MS,
        .task = { { 11, 1, 0, 250 * MS }, { 12, 0, 0, 0 } },
    };
    assert_string_equal(report_of(&run),
                        "work: 2 tasks for 60000 ms, a request every 250 ms computing 0% of it: running\n"
                        "pid 11: 1 requests, compute 0 ms, wait 250 ms (0% computing)\n"
                        "pid 12: 0 requests, compute 0 ms, wait 0 ms (0% computing)\n"
                        "total: 1 requests, compute 0 ms, wait 250 ms (0% computing)\n");
}

static void test_report_names_the_tasks_started_not_asked(void **state)
{
    (void)state;
    /* 4 asked, 1 started (the task table was full): the report is of the one */
    struct work_run_log run = {
        .params = { 100, 4, 100, 10 }, .tasks = 1, .running = false, .elapsed_ns = 100 * MS,
        .task = { { 5, 10, 100 * MS, 0 }, { 99, 99, 99, 99 } },
    };
    assert_string_equal(report_of(&run),
                        "work: 1 tasks for 100 ms, a request every 10 ms computing 100% of it: finished in 100 ms\n"
                        "pid 5: 10 requests, compute 100 ms, wait 0 ms (100% computing)\n"
                        "total: 10 requests, compute 100 ms, wait 0 ms (100% computing)\n");
}

UNIT_MAIN(NULL, NULL, test_words, test_first_request_arrives_at_the_start,
          test_arrivals_keep_to_the_grid_within_the_jitter, test_the_same_seed_replays_and_another_does_not,
          test_a_period_of_one_ms_still_jitters, test_compute_share_of_a_period,
          test_each_request_adds_to_the_task_account, test_report_of_a_finished_run, test_report_of_a_run_going_on,
          test_report_names_the_tasks_started_not_asked)
