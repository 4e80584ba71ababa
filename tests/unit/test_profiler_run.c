/* tests/unit/test_profiler_run.c: run control's consumer side (kernel/profiler/run.c) over synthetic rings --
 * profiler_drain hands every wanted record once, oldest first CPU by CPU, skips other runs' records and those
 * the pid or label filter refuses, consumes everything that was present and leaves what commits during the
 * drain for the next; profiler_drops sums every CPU's ring; profiler_window sleeps in PROFILE_DRAIN_MS steps
 * up to its end (the last one cut short), steps after each sleep, and ends when its stop check says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/labels.h"
#include "kernel/profiler/run.h"
#include "kernel/task.h"
#include "unit_main.h"

#define NCPUS 3
#define CAP 8
static struct profile_record storage[NCPUS][CAP];
static struct profile_ring rings[NCPUS];
static struct profile_run run;

static void new_run(uint32_t number)
{
    for (unsigned i = 0; i < NCPUS; i++)
        /* one ring just short of the index wrap, so a drain crosses it */
        profile_ring_init(&rings[i], storage[i], CAP, i == 1 ? UINT32_MAX - 2 : 5 * i);
    memset(&run, 0, sizeof run);
    run.rings = rings;
    run.ncpus = NCPUS;
    run.run = number;
}

/* A record of run number on cpu, told apart by tag (its first frame). */
static bool push(unsigned cpu, uint32_t number, uint32_t pid, const struct label_set *labels, uintptr_t tag)
{
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    if (!rec)
        return false;
    *rec = (struct profile_record){ .run = number, .cpu = (uint16_t)cpu, .pid = pid, .labels = labels,
                                    .labels_generation = labels ? labels->generation : 0, .nframes = 1,
                                    .frames = { tag } };
    profile_ring_commit(&rings[cpu]);
    return true;
}

/* ---- a take that writes down what it was handed ---------------------------------------------------------- */

static uintptr_t taken[64];
static unsigned ntaken;
static unsigned commit_during_take; /* this many takes push one more record of the run onto ring 0 */

static void take_tag(void *arg, const struct profile_record *rec)
{
    assert_ptr_equal(arg, &taken);
    assert_true(ntaken < 64);
    taken[ntaken++] = rec->frames[0];
    if (commit_during_take) {
        commit_during_take--;
        assert_true(push(0, run.run, 1, NULL, 0x900 + commit_during_take));
    }
}

static void drain(const struct profile_filter *filter)
{
    ntaken = 0;
    profiler_drain(&run, filter, take_tag, &taken);
}

static void assert_rings_empty(void)
{
    for (unsigned i = 0; i < NCPUS; i++)
        assert_int_equal(profile_ring_count(&rings[i]), 0);
}

static void test_drain_hands_each_wanted_record_once(void **state)
{
    (void)state;
    new_run(7);
    push(0, 7, 1, NULL, 0x10);
    push(0, 6, 1, NULL, 0x11); /* a straggler of the run before */
    push(0, 7, 2, NULL, 0x12);
    push(1, 7, 1, NULL, 0x20);
    push(1, 7, 1, NULL, 0x21);
    push(1, 8, 1, NULL, 0x22); /* not this run either */
    push(1, 7, 3, NULL, 0x23);
    push(2, 7, 4, NULL, 0x30);
    drain(NULL);
    const uintptr_t want[] = { 0x10, 0x12, 0x20, 0x21, 0x23, 0x30 };
    assert_int_equal(ntaken, 6);
    assert_memory_equal(taken, want, sizeof want);
    assert_rings_empty();
    /* consumed: a second drain finds nothing */
    drain(NULL);
    assert_int_equal(ntaken, 0);
}

/* Pushes the same records of run 3 and one of run 2 -- pids 5 and 6, labels job=a, job=b and none -- and
 * drains them through filter: every ring is empty after, and the tags taken are want's. */
static void drain_mixed_expecting(const struct profile_filter *filter, const uintptr_t *want, unsigned nwant)
{
    const struct label_set *job_a = label_intern_one("job", "a", NULL);
    const struct label_set *job_b = label_intern_one("job", "b", NULL);
    assert_non_null(job_a);
    assert_non_null(job_b);
    new_run(3);
    push(0, 3, 5, job_a, 0x1);
    push(0, 3, 6, job_a, 0x2);
    push(1, 3, 5, job_b, 0x3);
    push(1, 3, 5, NULL, 0x4);
    push(2, 2, 5, job_a, 0x5); /* another run's, though pid and label match */
    push(2, 3, 5, job_a, 0x6);
    drain(filter);
    assert_int_equal(ntaken, nwant);
    assert_memory_equal(taken, want, nwant * sizeof *want);
    assert_rings_empty();
}

static void test_drain_skips_filtered_records(void **state)
{
    (void)state;
    const uintptr_t unfiltered[] = { 0x1, 0x2, 0x3, 0x4, 0x6 };
    drain_mixed_expecting(NULL, unfiltered, 5);

    struct profile_filter pid5 = { .by_pid = true, .pid = 5 };
    const uintptr_t of_pid5[] = { 0x1, 0x3, 0x4, 0x6 };
    drain_mixed_expecting(&pid5, of_pid5, 4);

    struct profile_filter job_a = { .by_label = true };
    strcpy(job_a.label.key, "job");
    strcpy(job_a.label.value, "a");
    const uintptr_t with_job_a[] = { 0x1, 0x2, 0x6 };
    drain_mixed_expecting(&job_a, with_job_a, 3);

    struct profile_filter pid6_job_a = job_a;
    pid6_job_a.by_pid = true;
    pid6_job_a.pid = 6;
    const uintptr_t of_both[] = { 0x2 };
    drain_mixed_expecting(&pid6_job_a, of_both, 1);
}

static void test_drain_takes_only_what_is_present(void **state)
{
    (void)state;
    new_run(9);
    push(0, 9, 1, NULL, 0x1);
    push(0, 9, 1, NULL, 0x2);
    push(1, 9, 1, NULL, 0x3);
    /* each of the first two takes from ring 0 commits one more record there, as a CPU's tick would */
    commit_during_take = 2;
    drain(NULL);
    const uintptr_t want[] = { 0x1, 0x2, 0x3 };
    assert_int_equal(ntaken, 3);
    assert_memory_equal(taken, want, sizeof want);
    assert_int_equal(profile_ring_count(&rings[0]), 2);
    /* ... and the next drain takes them, in the order they came */
    drain(NULL);
    const uintptr_t later[] = { 0x901, 0x900 };
    assert_int_equal(ntaken, 2);
    assert_memory_equal(taken, later, sizeof later);
    assert_rings_empty();
}

static void test_drops_sum_every_ring(void **state)
{
    (void)state;
    new_run(1);
    assert_int_equal(profiler_drops(&run), 0);
    for (unsigned i = 0; i < CAP + 2; i++)
        push(0, 1, 1, NULL, i); /* two refused */
    for (unsigned i = 0; i < CAP + 5; i++)
        push(2, 1, 1, NULL, i); /* five refused */
    assert_int_equal(profile_ring_drops(&rings[0]), 2);
    assert_int_equal(profile_ring_drops(&rings[1]), 0);
    assert_int_equal(profile_ring_drops(&rings[2]), 5);
    assert_int_equal(profiler_drops(&run), 7);
    /* a drain consumes records, not the count: it is the run's */
    drain(NULL);
    assert_int_equal(ntaken, 2 * CAP);
    assert_int_equal(profiler_drops(&run), 7);
    /* only the rings the run has */
    run.ncpus = 2;
    assert_int_equal(profiler_drops(&run), 2);
}

/* ---- the window ---------------------------------------------------------------------------------------- */

static int64_t sleeps[64]; /* where each sleep was until, relative to the run's start */
static unsigned nsleeps, nsteps, stop_after_steps;
static bool saw_over;

void task_sleep_until(int64_t when_ns)
{
    assert_true(nsleeps < 64);
    sleeps[nsleeps++] = when_ns - run.start_ns;
    /* a sleep that overruns a little, as a scheduler's does */
    fake_time_ns = when_ns + 1000;
}

static void count_step(void *arg)
{
    assert_ptr_equal(arg, &nsteps);
    assert_int_equal(nsteps + 1, nsleeps); /* one step after each sleep */
    nsteps++;
}

static bool stop_on_request(void *arg, bool window_over)
{
    assert_ptr_equal(arg, &nsteps);
    saw_over = window_over;
    return window_over || nsteps == stop_after_steps;
}

static void new_window(void)
{
    new_run(1);
    run.start_ns = fake_time_ns = 5000000000;
    nsleeps = nsteps = 0;
    saw_over = false;
}

static void test_window_runs_to_its_end(void **state)
{
    (void)state;
    new_window();
    profiler_window(&run, 120, NULL, count_step, &nsteps);
    /* 50 ms steps from where each sleep woke, the last cut short at the end */
    assert_int_equal(nsleeps, 3);
    assert_int_equal(nsteps, 3);
    assert_int_equal(sleeps[0], 50000000);
    assert_int_equal(sleeps[1], 100001000);
    assert_int_equal(sleeps[2], 120000000);
}

static void test_window_ends_when_asked(void **state)
{
    (void)state;
    /* until stopped: no end, full steps, and the check is told the window is never over */
    new_window();
    stop_after_steps = 4;
    profiler_window(&run, 0, stop_on_request, count_step, &nsteps);
    assert_int_equal(nsteps, 4);
    assert_int_equal(nsleeps, 4);
    assert_int_equal(sleeps[3], 4 * 50000000 + 3 * 1000);
    assert_false(saw_over);

    /* with an end: the check hears it is over, and the window ends there */
    new_window();
    stop_after_steps = 100;
    profiler_window(&run, 60, stop_on_request, count_step, &nsteps);
    assert_int_equal(nsteps, 2);
    assert_int_equal(sleeps[1], 60000000);
    assert_true(saw_over);

    /* asked before the first sleep: no sleep, no step */
    new_window();
    stop_after_steps = 0;
    profiler_window(&run, 0, stop_on_request, count_step, &nsteps);
    assert_int_equal(nsleeps, 0);
    assert_int_equal(nsteps, 0);
}

UNIT_MAIN(NULL, NULL,
          test_drain_hands_each_wanted_record_once, test_drain_skips_filtered_records,
          test_drain_takes_only_what_is_present, test_drops_sum_every_ring, test_window_runs_to_its_end,
          test_window_ends_when_asked)
