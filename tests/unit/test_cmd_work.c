/* tests/unit/test_cmd_work.c: the `work` command and its run (kernel/shell/cmd_work.c, kernel/workload/work.c)
 * on the fake kernel: bad words give the usage line and start nothing; a second run while one goes is refused
 * in one line; the tasks are run here, one after another, each from the run's start on a clock that moves 1 ms
 * at every read (so the compute phase's spin ends) and jumps to the end of every wait. Each request is then held
 * to the arrival schedule the task's slot seeds: one span per request, new each time, set for the whole request
 * (the wait on the timer included) and cleared after; compute + wait exactly the request's period (the last one
 * cut at the deadline), the compute its share of the period; the task's account the sum of its spans; the label
 * work=serve on the task while it serves and given back after. Also: a task table that runs out, `work spans`
 * starting at the last run's first span, and the report before any run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "fake_kernel.h"
#include "shell_line.h"
#include "unit_main.h"
#include "kernel/labels.h"
#include "kernel/task.h"
#include "kernel/workload/work.h"

#define MS 1000000ll
#define FIRST_PID 20
#define USAGE "usage: work [MS N [COMPUTE [PERIOD]]] (MS 1..60000, N 1..16, COMPUTE 0..100 percent, PERIOD 1..10000 " \
              "ms) | work spans [FROM]\n"

/* ---- the kernel's tasks, faked: spawned into a table, run when the test says ---- */

static struct task tasks[WORK_MAX_TASKS];
static void (*entries[WORK_MAX_TASKS])(void *arg);
static void *args[WORK_MAX_TASKS];
static unsigned spawned, ran, spawn_limit;
static unsigned waits, waits_outside_a_span, waits_unlabelled;

struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    assert_string_equal(name, "work");
    assert_int_equal(cpu, -1); /* any CPU, the least loaded */
    if (spawned >= spawn_limit)
        return NULL;
    memset(&tasks[spawned], 0, sizeof tasks[spawned]);
    tasks[spawned].pid = FIRST_PID + spawned;
    entries[spawned] = entry;
    args[spawned] = arg;
    return &tasks[spawned++];
}

/* The wait of a request: on the timer, inside the request's span, with the task labelled. */
void task_wait_until(int64_t when_ns, enum task_wait why)
{
    assert_int_equal(why, TASK_WAIT_TIMER);
    struct task *self = task_current();
    waits++;
    waits_outside_a_span += task_span(self) == 0;
    waits_unlabelled += !label_set_has(task_labels(self), "work", "serve");
    if (when_ns > fake_time_ns)
        fake_time_ns = when_ns;
}

/* Runs every task spawned and not yet run, each from start_ns as if each had a CPU of its own. */
static void run_tasks(int64_t start_ns)
{
    fake_time_step_ns = 1 * MS;
    for (; ran < spawned; ran++) {
        fake_current = &tasks[ran];
        fake_time_ns = start_ns;
        entries[ran](args[ran]);
        assert_null(task_labels(&tasks[ran])); /* given back */
        assert_int_equal(task_span(&tasks[ran]), 0);
    }
    fake_current = NULL;
    fake_time_step_ns = 0;
}

static int setup(void **state)
{
    (void)state;
    fake_tasks_reset(1);
    spawned = ran = 0;
    spawn_limit = WORK_MAX_TASKS;
    waits = waits_outside_a_span = waits_unlabelled = 0;
    fake_time_ns = 1000 * MS;
    return 0;
}

/* ---- the command's answers ---- */

static char out[32768];

static int work(const char *line)
{
    return shell_line_run(cmd_work, line, out, sizeof out, &(struct shell_origin){ 0 });
}

static void expect_answer(const char *line, int result, const char *answer)
{
    int got = work(line);
    if (strcmp(out, answer) != 0)
        fail_msg("%s said:\n%s\nnot:\n%s", line, out, answer);
    assert_int_equal(got, result);
}

/* The span log's lines since FROM: [pid, span, compute_ns, wait_ns] into rows (at most max); their number. */
static unsigned read_spans(uint64_t from, int64_t rows[][4], unsigned max)
{
    unsigned n = 0;
    for (;;) {
        char line[32];
        snprintf(line, sizeof line, "work spans %llu", (unsigned long long)from);
        assert_int_equal(work(line), 0);
        unsigned long long next, lost;
        const char *trailer = strstr(out, "work spans: next ");
        assert_non_null(trailer);
        assert_int_equal(sscanf(trailer, "work spans: next %llu lost %llu\n", &next, &lost), 2);
        assert_int_equal(lost, 0);
        for (const char *p = out; p < trailer; p = strchr(p, '\n') + 1) {
            long long pid, span, compute, wait;
            assert_int_equal(sscanf(p, "span %lld %lld %lld %lld\n", &pid, &span, &compute, &wait), 4);
            assert_true(n < max);
            rows[n][0] = pid, rows[n][1] = span, rows[n][2] = compute, rows[n][3] = wait;
            n++;
        }
        if (next == from)
            return n;
        from = next;
    }
}

static void test_before_any_run(void **state)
{
    (void)state;
    expect_answer("work", 0, "work: no run yet\n");
    expect_answer("work spans", 0, "work spans: next 0 lost 0\n");
}

static void test_bad_words_start_nothing(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "work 2000", "work 0 4", "work 60001 4", "work 2000 0", "work 2000 17", "work 2000 4 101", "work 2000 4 30 0",
        "work 2000 4 30 10001", "work 2000 4 30 100 1", "work x 4", "work spans x", "work spans 1 2", "work 2000 4x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_answer(bad[i], 1, USAGE);
    assert_int_equal(spawned, 0);
    expect_answer("work", 0, "work: no run yet\n");
}

static void test_a_run_serves_its_schedule(void **state)
{
    (void)state;
    const int64_t start = fake_time_ns;
    const unsigned used_before = label_sets_used();
    expect_answer("work 2000 3", 0,
                  "work: started 3 tasks for 2000 ms, a request every 100 ms computing 30% of it (pids 20 21 22)\n");
    assert_int_equal(spawned, 3);
    assert_int_equal(label_sets_used(), used_before + 1); /* work=serve, the run's */
    expect_answer("work 1000 1", 1, "work: busy (a run is in progress)\n");
    assert_int_equal(spawned, 3);
    expect_answer("work", 0,
                  "work: 3 tasks for 2000 ms, a request every 100 ms computing 30% of it: running\n"
                  "pid 20: 0 requests, compute 0 ms, wait 0 ms (0% computing)\n"
                  "pid 21: 0 requests, compute 0 ms, wait 0 ms (0% computing)\n"
                  "pid 22: 0 requests, compute 0 ms, wait 0 ms (0% computing)\n"
                  "total: 0 requests, compute 0 ms, wait 0 ms (0% computing)\n");

    run_tasks(start);
    assert_int_equal(label_sets_used(), used_before); /* the last task gave the run's set back */

    static int64_t spans[256][4];
    struct work_run_log run;
    assert_true(work_last_run(&run));
    assert_false(run.running);
    unsigned n = read_spans(run.first_span, spans, 256);
    const int64_t deadline = start + 2000 * MS;
    unsigned total = 0, cut = 0;
    for (uint32_t slot = 0; slot < 3; slot++) {
        /* the arrivals the slot's seed gives, and each request held to its period */
        struct work_schedule schedule;
        work_schedule_init(&schedule, start, 100, slot);
        int64_t arrival = work_schedule_next(&schedule), compute = 0, wait = 0;
        uint64_t requests = 0;
        for (unsigned i = 0; i < n; i++) {
            if (spans[i][0] != FIRST_PID + slot)
                continue;
            int64_t next = work_schedule_next(&schedule);
            int64_t period = (next < deadline ? next : deadline) - arrival;
            int64_t planned = work_compute_ns(next - arrival, 30);
            if (planned < period) {
                /* computed its share (give or take the fake clock's reads), then waited out the period */
                assert_int_equal(spans[i][2] + spans[i][3], period);
                assert_in_range(spans[i][2], planned, planned + 3 * MS);
            } else {
                /* arrived so near the deadline that its compute was cut there, and nothing was left to wait */
                assert_in_range(spans[i][2], period, period + 2 * MS);
                assert_in_range(spans[i][3], 0, 2 * MS);
                cut++;
            }
            compute += spans[i][2], wait += spans[i][3], requests++;
            arrival = next;
        }
        assert_true(arrival >= deadline); /* no arrival before the deadline went unserved */
        assert_in_range(requests, 20, 21);
        assert_int_equal(run.task[slot].pid, FIRST_PID + slot);
        assert_int_equal(run.task[slot].requests, requests);
        assert_int_equal(run.task[slot].compute_ns, compute);
        assert_int_equal(run.task[slot].wait_ns, wait);
        /* the loop's time, from its start to the deadline (and the reads past it of a request cut there) */
        assert_in_range(compute + wait, 2000 * MS, 2004 * MS);
        total += (unsigned)requests;
    }
    assert_int_equal(n, total);
    assert_int_equal(waits, total - cut); /* each inside its span, labelled */
    assert_int_equal(waits_outside_a_span, 0);
    assert_int_equal(waits_unlabelled, 0);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            assert_true(spans[i][1] != spans[j][1]);
}

static void test_the_report_adds_up(void **state)
{
    (void)state;
    /* after the run above: each task's line is its account in whole ms, the total their sum */
    struct work_run_log run;
    assert_true(work_last_run(&run));
    assert_int_equal(work("work"), 0);
    char want[256];
    snprintf(want, sizeof want, "work: 3 tasks for 2000 ms, a request every 100 ms computing 30%% of it: finished in ");
    assert_true(strncmp(out, want, strlen(want)) == 0);
    for (unsigned i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "\npid %u: %llu requests, compute %lld ms, wait %lld ms (", FIRST_PID + i,
                 (unsigned long long)run.task[i].requests, (long long)(run.task[i].compute_ns / MS),
                 (long long)(run.task[i].wait_ns / MS));
        assert_non_null(strstr(out, want));
    }
    assert_non_null(strstr(out, "\ntotal: "));
}

static void test_a_full_task_table(void **state)
{
    (void)state;
    spawn_limit = 1;
    const int64_t start = fake_time_ns;
    expect_answer("work 300 3 50 100", 0,
                  "work: started 3 tasks for 300 ms, a request every 100 ms computing 50% of it (pids 20)\n"
                  "work: only 1 of 3 tasks could be started\n");
    expect_answer("work 300 3", 1, "work: busy (a run is in progress)\n"); /* the one started still runs */
    run_tasks(start);
    struct work_run_log run;
    assert_true(work_last_run(&run));
    assert_false(run.running);
    assert_int_equal(run.tasks, 1);
    assert_in_range(run.task[0].requests, 3, 4);
    assert_in_range(run.task[0].compute_ns + run.task[0].wait_ns, 300 * MS, 304 * MS);

    /* none at all: the run ends at once, nothing left claimed */
    spawn_limit = 1;
    const unsigned used_before = label_sets_used();
    expect_answer("work 300 2", 1,
                  "work: started 2 tasks for 300 ms, a request every 100 ms computing 30% of it (pids)\n"
                  "work: only 0 of 2 tasks could be started\n");
    assert_int_equal(label_sets_used(), used_before);
    assert_true(work_last_run(&run));
    assert_false(run.running);
    assert_int_equal(run.tasks, 0);
}

static void test_spans_start_at_the_last_run(void **state)
{
    (void)state;
    const int64_t start = fake_time_ns;
    expect_answer("work 250 1 100 50", 0,
                  "work: started 1 tasks for 250 ms, a request every 50 ms computing 100% of it (pids 20)\n");
    run_tasks(start);
    struct work_run_log run;
    assert_true(work_last_run(&run));
    static int64_t spans[64][4];
    unsigned n = read_spans(run.first_span, spans, 64);
    assert_int_equal(n, run.task[0].requests);
    assert_int_equal(work("work spans"), 0); /* the same page, without FROM */
    char first[64];
    snprintf(first, sizeof first, "span 20 %lld ", (long long)spans[0][1]);
    assert_true(strncmp(out, first, strlen(first)) == 0);
    for (unsigned i = 0; i < n; i++)
        assert_in_range(spans[i][3], 0, 2 * MS); /* computing all the time: no wait but the fake clock's reads */
    assert_int_equal(waits, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL, test_before_any_run, test_bad_words_start_nothing,
               test_a_run_serves_its_schedule, test_the_report_adds_up, test_a_full_task_table,
               test_spans_start_at_the_last_run)
