/* tests/unit/test_profiler_fold_counts.c: what a profile report (kernel/profiler/report.c, fold.c) counts and
 * when it is empty -- the header's CPUs, drops, window and source, records of other runs ignored, the pid
 * filter, the rings consumed, empty reports on the tick, the counter and for a pid, and the chain table given
 * back to the heap (or the report refused when the heap fails). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"
#include "profiler_fold_fixture.h"
#include "unit_main.h"

/* ---- what is counted ------------------------------------------------------------------------------------ */

static void test_header_counts_cpus_and_drops(void **state)
{
    (void)state;
    /* CPU 0 overfills its ring by 5, CPU 1 by 2; CPU 2 contributes 3; CPU 3 nothing. */
    PUSH_N(CAP + 5, 0, 1, MAIN + 1);
    PUSH_N(CAP + 2, 1, 1, MAIN + 1);
    PUSH_N(3, 2, 1, SPIN + 1);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(2051, 3, 7)
                        "99.9% 2048 Main+0x1\n"
                        "0.1% 3 Spin+0x1\n");
}

static void test_header_names_window_and_source(void **state)
{
    (void)state;
    new_run(3, "pmu/nmi intel fixed-ctr1");
    run.window_ms = 2003;
    PUSH(1, 1, MAIN + 1);
    assert_string_equal(report(8),
                        "profiled 2003 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1 every 2000000 cycles\n"
                        "100.0% 1 Main+0x1\n");
}

static void test_samples_of_other_runs_are_ignored(void **state)
{
    (void)state;
    /* Stragglers: a sample that passed its check in run 6 and committed after run 7 reset the ring. */
    push_record(0, 1, 6, FRAMES(SPIN + 1));
    PUSH(0, 1, MAIN + 1);
    push_record(1, 1, 6, FRAMES(SPIN + 1));
    push_record(0, 1, 8, FRAMES(SPIN + 1));
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Main+0x1\n");
}

static void test_pid_filter(void **state)
{
    (void)state;
    PUSH_N(3, 0, 5, SPIN + 1, MAIN + 0x10);
    PUSH_N(4, 1, 6, MEMCPY + 1, MAIN + 0x20);
    PUSH(2, 5, SPIN + 2, MAIN + 0x10);
    PUSH(3, 6, SPIN + 2, MAIN + 0x10);
    struct profile_filter only5 = { .by_pid = true, .pid = 5 };
    assert_string_equal(report_filtered(&only5, 8),
                        TICK_RUN_HEADER(4, 2, 0)
                        "100.0% 4 Spin+0x1..0x2\n"
                        "        <- Main+0x10\n");
}

static void test_filter_for_all(void **state)
{
    (void)state;
    PUSH(0, 5, SPIN + 1);
    PUSH(1, 6, SPIN + 1);
    struct profile_filter all = { .by_pid = false, .pid = 5 };
    assert_string_equal(report_filtered(&all, 8),
                        TICK_RUN_HEADER(2, 2, 0)
                        "100.0% 2 Spin+0x1\n");
}

static void test_report_consumes_the_rings(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN + 1);
    report(8);
    for (unsigned i = 0; i < NCPUS; i++)
        assert_int_equal(profile_ring_count(&rings[i]), 0);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(0, 0, 0)
                        "no samples: nothing was sampled in the window\n");
}

/* ---- empty reports ----------------------------------------------------------------------------------- */

static void test_empty_report_on_the_tick(void **state)
{
    (void)state;
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(0, 0, 0)
                        "no samples: nothing was sampled in the window\n");
}

static void test_empty_report_on_the_counter(void **state)
{
    (void)state;
    new_run(4, "pmu/nmi amd pmcx076");
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source pmu/nmi amd pmcx076 every 2000000 cycles\n"
                        "no samples: nothing was sampled in the window\n"
                        "idle CPUs contribute nothing on the counter: it counts unhalted cycles\n");
}

static void test_empty_report_for_a_pid(void **state)
{
    (void)state;
    PUSH(0, 5, SPIN + 1);
    struct profile_filter only12 = { .by_pid = true, .pid = 12 };
    assert_string_equal(report_filtered(&only12, 8),
                        TICK_RUN_HEADER(0, 0, 0)
                        "no samples for pid 12: the task may simply have been asleep the whole window\n");
}

static void test_only_stale_samples_is_empty(void **state)
{
    (void)state;
    push_record(0, 1, 6, FRAMES(SPIN + 1));
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(0, 0, 0)
                        "no samples: nothing was sampled in the window\n");
}

static void test_drops_without_samples(void **state)
{
    (void)state;
    /* Every slot of CPU 3 holds a stale record, so this run's samples there were all dropped. */
    for (unsigned i = 0; i < CAP; i++)
        push_record(3, 1, 6, FRAMES(SPIN + 1));
    PUSH_N(2, 3, 1, MAIN + 1);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(0, 0, 2)
                        "no samples: nothing was sampled in the window\n");
}

/* ---- the heap ---------------------------------------------------------------------------------------- */

static void test_out_of_memory(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN + 1);
    allocations_fail = true;
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    assert_int_equal(profile_report(&run, NULL, 8, &tab, &bs.sink), -1);
    assert_string_equal(text, "profile: out of memory\n");
    assert_int_equal(live_allocations, 0);
}

static void test_fold_on_its_own(void **state)
{
    (void)state;
    struct profile_fold *fold = profile_fold_create();
    assert_non_null(fold);
    assert_int_equal(live_allocations, 1);
    struct profile_record rec = { .nframes = 2, .frames = { SPIN + 1, MAIN + 2 } };
    for (int i = 0; i < 300; i++)
        profile_fold_add(fold, &tab, &rec);
    assert_int_equal(profile_fold_samples(fold), 300);
    profile_fold_destroy(fold);
    assert_int_equal(live_allocations, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_header_counts_cpus_and_drops, test_header_names_window_and_source,
               test_samples_of_other_runs_are_ignored, test_pid_filter, test_filter_for_all,
               test_report_consumes_the_rings, test_empty_report_on_the_tick, test_empty_report_on_the_counter,
               test_empty_report_for_a_pid, test_only_stale_samples_is_empty, test_drops_without_samples,
               test_out_of_memory, test_fold_on_its_own)
