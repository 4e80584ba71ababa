/* tests/unit/test_profiler_stream_headroom.c: the stream's "two profiles" of headroom (issue 23, item 8), in
 * counts. The stream's task drains what the rings hold (one interval) and packs and sends it, while the sample
 * path goes on recording the next interval into the same rings; a CPU's ring must hold what is left of the one
 * interval and what is recorded of the next until its turn comes: PROFILE_RING_RECORDS records, which is
 * PROFILE_STREAM_HEADROOM_MS_AT_1KHZ of samples at the counter's 1 kHz. Here the sender records the whole next
 * interval into every ring at its first datagram -- before any ring but the first has been drained, the worst
 * moment -- and nothing drops while the two intervals fit a ring; one record more and every CPU not yet drained
 * drops exactly one, counted in ring_dropped, and every sample is still accounted for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/profiler/stream_packer.h"
#include "kernel/profiler/stream_request.h"
#include "kernel/profiler/stream_task.h"
#include "unit_main.h"

#define CPUS 4
static struct profile_record storage[CPUS][PROFILE_RING_RECORDS];
static struct profile_ring rings[CPUS];
static struct profile_run run;
static int64_t clock_ns;

static void push(unsigned cpu)
{
    struct profile_record *r = profile_ring_reserve(&rings[cpu]);
    if (!r)
        return; /* a drop, counted by the ring */
    memset(r, 0, sizeof *r);
    r->time_ns = ++clock_ns;
    r->pid = 3;
    r->run = run.run;
    r->cpu = (uint16_t)cpu;
    r->nframes = 8;
    for (unsigned i = 0; i < 8; i++)
        r->frames[i] = 0xffffffff80000000ull + i;
    profile_ring_commit(&rings[cpu]);
}

/* The sender: sends succeed; at the first datagram of a drain, the next interval is recorded on every CPU. */
static unsigned next_interval;
static bool recorded_next;
static uint64_t samples_sent, datagrams;

static bool send_recording(void *arg, const char *data, size_t len)
{
    (void)arg;
    struct profile_stream_datagram d;
    assert_true(profile_stream_parse_datagram(data, len, &d, NULL, NULL));
    if (!d.is_end)
        samples_sent += d.header.samples;
    datagrams++;
    if (!recorded_next) {
        recorded_next = true;
        for (unsigned cpu = 0; cpu < CPUS; cpu++)
            for (unsigned i = 0; i < next_interval; i++)
                push(cpu);
    }
    return true;
}

static void setup_run(void)
{
    memset(&run, 0, sizeof run);
    for (unsigned cpu = 0; cpu < CPUS; cpu++)
        profile_ring_init(&rings[cpu], storage[cpu], PROFILE_RING_RECORDS, 0);
    run.rings = rings;
    run.ncpus = CPUS;
    run.run = 5;
    run.source = run.source_name = "tick";
    run.period_ns = 1000000;
    samples_sent = datagrams = 0;
}

/* One interval of `first` records a CPU drained while `next` more are recorded; then the rest drained and the
 * end sent. Returns the end line's figures. */
static struct profile_stream_end two_intervals(unsigned first, unsigned next)
{
    setup_run();
    struct profile_streamer s;
    profile_streamer_init(&s, 0x1234, &run, "", send_recording, NULL, 0);
    for (unsigned cpu = 0; cpu < CPUS; cpu++)
        for (unsigned i = 0; i < first; i++)
            push(cpu);
    next_interval = next;
    recorded_next = false;
    profile_streamer_drain(&s, &run, NULL, 1000000);
    assert_true(recorded_next);
    profile_streamer_drain(&s, &run, NULL, 2000000);
    struct profile_stream_end end;
    profile_streamer_finish(&s, PROFILE_STREAM_STOPPED, 3000000, &end);
    assert_int_equal(end.produced, samples_sent + end.ring_dropped + end.unsent); /* every sample accounted for */
    assert_int_equal(end.unsent, 0);
    return end;
}

static void test_the_headroom_is_the_ring_at_1khz(void **state)
{
    (void)state;
    assert_int_equal(PROFILE_STREAM_HEADROOM_MS_AT_1KHZ, PROFILE_RING_RECORDS); /* 1 record a ms at 1 kHz */
    assert_int_equal(PROFILE_RING_RECORDS, 1024);
}

/* Two profiles of half a ring each, the seed's sizing: nothing drops. */
static void test_half_and_half_drops_nothing(void **state)
{
    (void)state;
    struct profile_stream_end end = two_intervals(PROFILE_RING_RECORDS / 2, PROFILE_RING_RECORDS / 2);
    assert_int_equal(end.ring_dropped, 0);
    assert_int_equal(end.produced, CPUS * PROFILE_RING_RECORDS);
}

/* Any split that fits a ring: a long interval still being sent while a short one is recorded, or the other way. */
static void test_any_split_that_fits_drops_nothing(void **state)
{
    (void)state;
    static const unsigned firsts[] = { 1, 100, 700, PROFILE_RING_RECORDS - 1 };
    for (unsigned i = 0; i < sizeof firsts / sizeof firsts[0]; i++) {
        struct profile_stream_end end = two_intervals(firsts[i], PROFILE_RING_RECORDS - firsts[i]);
        assert_int_equal(end.ring_dropped, 0);
        assert_int_equal(end.produced, CPUS * PROFILE_RING_RECORDS);
    }
}

/* One record more than a ring: each CPU whose ring was not drained yet when the next interval was recorded drops
 * exactly one (the first CPU's ring was being drained: its records had begun to leave), counted. */
static void test_one_more_is_one_drop_a_cpu_counted(void **state)
{
    (void)state;
    struct profile_stream_end end = two_intervals(PROFILE_RING_RECORDS / 2, PROFILE_RING_RECORDS / 2 + 1);
    assert_int_equal(end.ring_dropped, CPUS - 1);
    assert_int_equal(end.produced, CPUS * (PROFILE_RING_RECORDS + 1));
}

UNIT_MAIN(NULL, NULL,
          test_the_headroom_is_the_ring_at_1khz, test_half_and_half_drops_nothing,
          test_any_split_that_fits_drops_nothing, test_one_more_is_one_drop_a_cpu_counted)
