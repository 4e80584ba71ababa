/* tests/unit/test_profiler_fold_labels.c: labels in a profile report (kernel/profiler/report.c, fold.c) -- the
 * breakdown line (hottest first, ties in first-seen order, only when a sample is labelled, counts that add up),
 * the label filter, alone, with a pid, and matching nothing, the fold's references to the sets it counts, and
 * the `labels dropped` line. */
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
#include "kernel/profiler/fold.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"
#include "profiler_fold_fixture.h"
#include "unit_main.h"

/* ---- labels ------------------------------------------------------------------------------------------ */


static void test_breakdown_line(void **state)
{
    (void)state;
    next_labels = set_of("cmd=profile", NULL);
    PUSH_N(5, 0, 3, SPIN + 1, MAIN + 0x10);
    next_labels = NULL;
    PUSH_N(3, 1, 4, MEMCPY + 1, MAIN + 0x20);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(8, 2, 0)
                        "labels: 62.5% (5) cmd=profile, 37.5% (3) (none)\n"
                        "62.5% 5 Spin+0x1\n"
                        "        <- Main+0x10\n"
                        "37.5% 3 MemCpy+0x1\n"
                        "        <- Main+0x20\n");
}

static void test_breakdown_hottest_first_ties_first_seen(void **state)
{
    (void)state;
    /* First seen, CPU by CPU: (none), job=b, job=a+netload=sink, job=a. Counts 2, 4, 4, 1. */
    const struct label_set *b = set_of("job=b", NULL), *a_sink = set_of("netload=sink", "job=a"),
                           *a = set_of("job=a", NULL);
    PUSH_N(2, 0, 5, SPIN + 1);
    next_labels = b;
    PUSH_N(4, 1, 6, SPIN + 1);
    next_labels = a_sink;
    PUSH_N(4, 2, 7, SPIN + 1);
    next_labels = a;
    PUSH(3, 8, SPIN + 1);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(11, 4, 0)
                        "labels: 36.4% (4) job=b, 36.4% (4) job=a,netload=sink, 18.2% (2) (none), 9.1% (1) job=a\n"
                        "100.0% 11 Spin+0x1\n");
}

static void test_breakdown_only_when_some_sample_is_labelled(void **state)
{
    (void)state;
    /* The labelled samples belong to a pid the filter leaves out: no line. */
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    next_labels = NULL;
    PUSH(1, 6, SPIN + 1);
    struct profile_filter only6 = { .by_pid = true, .pid = 6 };
    assert_string_equal(report_filtered(&only6, 8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Spin+0x1\n");
    /* A stale labelled record of an earlier run does not count either. */
    new_run(8, "tick");
    next_labels = set_of("job=a", NULL);
    push_record(0, 1, 7, FRAMES(SPIN + 1));
    next_labels = NULL;
    PUSH(0, 1, SPIN + 1);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Spin+0x1\n");
}

static void test_breakdown_counts_add_up(void **state)
{
    (void)state;
    /* 3 sets and none over 1001 samples: the counts add up to the total whatever the rounding. */
    const struct label_set *sets[3] = { set_of("k=1", NULL), set_of("k=2", NULL), set_of("k=3", NULL) };
    for (unsigned i = 0; i < 1001; i++) {
        next_labels = i % 7 == 0 ? NULL : sets[i % 3];
        PUSH(i % NCPUS, 1, SPIN + 1 + (i % 5), MAIN + 1);
    }
    const char *out = report(8);
    const char *line = strstr(out, "\nlabels: ");
    assert_non_null(line);
    line += strlen("\nlabels: ");
    unsigned long long sum = 0;
    unsigned shares = 0;
    for (;;) {
        unsigned whole, tenth;
        unsigned long long n;
        int used = 0;
        assert_int_equal(sscanf(line, "%u.%u%% (%llu) %*[^,\n]%n", &whole, &tenth, &n, &used), 3);
        sum += n;
        shares++;
        line += used;
        if (*line == '\n')
            break;
        assert_memory_equal(line, ", ", 2);
        line += 2;
    }
    assert_int_equal(shares, 4);
    assert_int_equal(sum, 1001);
}

static void test_label_filter(void **state)
{
    (void)state;
    const struct label_set *a = set_of("job=a", NULL), *a_cmd = set_of("job=a", "cmd=burn"),
                           *b = set_of("job=b", NULL);
    next_labels = a;
    PUSH_N(3, 0, 5, SPIN + 1, MAIN + 0x10);
    next_labels = b;
    PUSH_N(4, 1, 6, MEMCPY + 1, MAIN + 0x20);
    next_labels = a_cmd;
    PUSH(2, 7, SPIN + 2, MAIN + 0x10);
    next_labels = NULL;
    PUSH_N(2, 3, 8, SPIN + 2, MAIN + 0x10);
    struct profile_filter job_a = { .by_label = true };
    assert_true(label_parse_pair("job=a", &job_a.label));
    assert_string_equal(report_filtered(&job_a, 8),
                        TICK_RUN_HEADER(4, 2, 0)
                        "labels: 75.0% (3) job=a, 25.0% (1) cmd=burn,job=a\n"
                        "100.0% 4 Spin+0x1..0x2\n"
                        "        <- Main+0x10\n");
}

static void test_label_filter_with_pid(void **state)
{
    (void)state;
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    PUSH(1, 6, MEMCPY + 1);
    struct profile_filter both = { .by_pid = true, .pid = 6, .by_label = true };
    assert_true(label_parse_pair("job=a", &both.label));
    assert_string_equal(report_filtered(&both, 8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "labels: 100.0% (1) job=a\n"
                        "100.0% 1 MemCpy+0x1\n");
}

static void test_label_filter_empty(void **state)
{
    (void)state;
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    next_labels = NULL;
    PUSH(1, 6, SPIN + 1);
    struct profile_filter job_z = { .by_label = true };
    assert_true(label_parse_pair("job=z", &job_z.label));
    assert_string_equal(report_filtered(&job_z, 8),
                        TICK_RUN_HEADER(0, 0, 0)
                        "no samples with label job=z: no task that carried it was sampled in the window\n");
    new_run(8, "tick");
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    struct profile_filter pid6 = { .by_pid = true, .pid = 6, .by_label = true };
    assert_true(label_parse_pair("job=a", &pid6.label));
    assert_string_equal(report_filtered(&pid6, 8),
                        TICK_RUN_HEADER(0, 0, 0)
                        "no samples for pid 6 with label job=a: the task may have been asleep, or without that "
                        "label, the whole window\n");
}

/* The fold holds a reference to each set it counts: the set's last other reference may go after the drain, and
 * the report still prints it whole; destroying the fold gives it back. A window that saw the pool refuse sets
 * says so under the header. */
static void test_fold_holds_its_sets_and_says_labels_dropped(void **state)
{
    (void)state;
    struct label_pair p;
    assert_true(label_parse_pair("req=held-by-fold", &p));
    const struct label_set *set = label_intern(&p, 1, NULL); /* the test's reference, the only one */
    next_labels = set;
    PUSH_N(3, 0, 3, SPIN + 1);
    next_labels = NULL;
    struct profile_fold *fold = profile_fold_create();
    profile_fold_drain(fold, &run, NULL, &tab);
    label_release(set);
    assert_true(label_set_interned(set)); /* the fold's */
    fold->labels_dropped = 2;
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    assert_int_equal(profile_report_print(&run, fold, NULL, 8, &tab, &bs.sink), 0);
    assert_non_null(strstr(text, "labels: 100.0% (3) req=held-by-fold\nlabels dropped: 2 label sets refused in the "
                                 "window, the pool of 255 was full (`label` shows it): those tasks kept their sets\n"));
    profile_fold_destroy(fold);
    assert_false(label_set_interned(set));
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_breakdown_line, test_breakdown_hottest_first_ties_first_seen,
               test_breakdown_only_when_some_sample_is_labelled, test_breakdown_counts_add_up, test_label_filter,
               test_label_filter_with_pid, test_label_filter_empty, test_fold_holds_its_sets_and_says_labels_dropped)
