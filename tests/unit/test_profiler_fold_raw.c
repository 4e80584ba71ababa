/* tests/unit/test_profiler_fold_raw.c: the raw form of a run (kernel/profiler/raw.c's output through
 * profile_report_raw) over the same synthetic rings as the folded report: its exact header, sample and trailer
 * lines, parsed back line by line, with filters, drops, the counter's name and the build id. */
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

/* ---- the raw form ---------------------------------------------------------------------------------------- */

static const char *report_raw(const struct profile_filter *filter, const char *build_id)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    assert_int_equal(profile_report_raw(&run, filter, build_id, &bs.sink), 0);
    assert_int_equal(bs.truncated, 0);
    assert_int_equal(live_allocations, 0); /* nothing allocated */
    return text;
}

/* Every line of a raw report parses as its kind, and the trailer counts the sample lines. */
static void expect_raw_parses(const char *out, uint64_t samples, uint64_t dropped)
{
    const char *line = out, *nl = strchr(line, '\n');
    struct profile_raw_header h;
    assert_non_null(nl);
    assert_true(profile_raw_parse_header(line, (size_t)(nl + 1 - line), &h));
    uint64_t lines = 0;
    struct profile_raw_sample s;
    struct profile_raw_trailer t;
    for (line = nl + 1; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        size_t len = (size_t)(nl + 1 - line);
        if (profile_raw_parse_sample(line, len, &s)) {
            lines++;
            continue;
        }
        assert_true(profile_raw_parse_trailer(line, len, &t));
        assert_string_equal(nl + 1, ""); /* the trailer is last */
        assert_int_equal(t.samples, lines);
        assert_int_equal(t.samples, samples);
        assert_int_equal(t.dropped, dropped);
        return;
    }
    fail_msg("no trailer in:\n%s", out);
}

static void test_raw_report(void **state)
{
    (void)state;
    run.source_name = "tick";
    run.period_ns = 10000000u;
    run.window_ms = 1003;
    next_labels = set_of("netload=sink", "job=a");
    PUSH(0, 5, SPIN + 1, MAIN + 0x10, 0xffffffff80001234u);
    next_labels = NULL;
    push_record(1, 0, run.run, FRAMES(0xffffffff80000010u));
    push_record(1, 9, 6, FRAMES(SPIN + 1)); /* a straggler of run 6 */
    /* times straight into the records, as the sampler writes them */
    rings[0].records[(atomic_load(&rings[0].head) - 1) & rings[0].mask].time_ns = 5123456789;
    rings[1].records[(atomic_load(&rings[1].head) - 2) & rings[1].mask].time_ns = -20;
    assert_string_equal(report_raw(NULL, "3970b5ac255dc9fffb55e8d81b69e7916c7f2003"),
                        "# kprof raw v2 source=tick period=10000000 unit=ns window_ms=1003 cpus=4 "
                        "build_id=3970b5ac255dc9fffb55e8d81b69e7916c7f2003\n"
                        "s 0 5 5123456789 job=a,netload=sink 0 - 0x1601 0x1710 0xffffffff80001234\n"
                        "s 1 0 -20 - 0 - 0xffffffff80000010\n"
                        "# kprof raw end samples=2 dropped=0\n");
    expect_raw_parses(text, 2, 0);
    /* consumed, like the report */
    for (unsigned i = 0; i < NCPUS; i++)
        assert_int_equal(profile_ring_count(&rings[i]), 0);
}

static void test_raw_report_filters_counts_drops_and_names_the_counter(void **state)
{
    (void)state;
    new_run(3, "pmu/nmi intel fixed-ctr1");
    run.source_name = "pmu/nmi intel fixed-ctr1";
    run.period_ns = 1000000;
    run.window_ms = 500;
    next_labels = set_of("job=a", NULL);
    PUSH_N(CAP + 3, 2, 5, SPIN + 1); /* fills CPU 2's ring: 3 dropped */
    next_labels = set_of("job=b", NULL);
    PUSH_N(2, 3, 6, SPIN + 2);
    struct profile_filter job_b = { .by_label = true };
    assert_true(label_parse_pair("job=b", &job_b.label));
    assert_string_equal(report_raw(&job_b, ""),
                        "# kprof raw v2 source=pmu/nmi-intel-fixed-ctr1 period=2000000 unit=cycles window_ms=500 cpus=4 "
                        "build_id=none\n"
                        "s 3 6 0 job=b 0 - 0x1602\n"
                        "s 3 6 0 job=b 0 - 0x1602\n"
                        "# kprof raw end samples=2 dropped=3\n");
    /* unfiltered, pid filter: every line parses, the trailer counts them */
    new_run(4, "tick");
    run.source_name = "tick";
    run.period_ns = 10000000u;
    next_labels = set_of("job=a", NULL);
    PUSH_N(CAP + 3, 2, 5, SPIN + 1, MAIN + 2, MAIN + 3, MAIN + 4, MAIN + 5, MAIN + 6, MAIN + 7, MAIN + 8);
    next_labels = NULL;
    PUSH_N(10, 0, 6, SPIN + 1);
    expect_raw_parses(report_raw(NULL, "ab"), CAP + 10, 3);
    new_run(5, "tick");
    run.source_name = "tick";
    PUSH_N(10, 0, 6, SPIN + 1);
    PUSH_N(4, 1, 7, SPIN + 1);
    struct profile_filter pid7 = { .by_pid = true, .pid = 7 };
    expect_raw_parses(report_raw(&pid7, "ab"), 4, 0);
    /* an empty run is a header and a trailer */
    new_run(6, "tick");
    run.source_name = "tick";
    run.period_ns = 10000000u;
    assert_string_equal(report_raw(NULL, "00"),
                        "# kprof raw v2 source=tick period=10000000 unit=ns window_ms=1000 cpus=4 build_id=00\n"
                        "# kprof raw end samples=0 dropped=0\n");
    /* a build id that is not hex is sent as none rather than breaking the header */
    assert_memory_equal(report_raw(NULL, "not hex"), "# kprof raw v2 source=tick period=10000000 unit=ns "
                        "window_ms=1000 cpus=4 build_id=none\n", 85);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_raw_report, test_raw_report_filters_counts_drops_and_names_the_counter)
