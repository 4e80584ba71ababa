/* tests/unit/test_profiler_stream.c: the pure half of `profile stream` (kernel/profiler/stream_codec.c) -- the exact
 * header and end lines, their round trips and garbled forms refused, whole datagrams parsed strictly, the
 * packing of records from synthetic rings into datagrams never over 1472 bytes with gap-free sample indexes,
 * the accounting of failed sends and full rings into unsent, ring_dropped and produced, the heartbeat, label
 * sets that change mid-stream arriving with exactly the samples taken after the change. The command's words and
 * where a stream may go are tests/unit/test_profiler_stream_request.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/labels.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/profiler/stream_packer.h"
#include "unit_main.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* Each text of the array lines refused by parse(text, length, out); a failure names the text. */
#define EXPECT_EACH_REFUSED(parse, lines, out)                                                                   \
    do {                                                                                                       \
        for (size_t i_ = 0; i_ < ARRAY_LEN(lines); i_++)                                                       \
            if (parse((lines)[i_], strlen((lines)[i_]), (out)))                                                \
                fail_msg("accepted: %s", (lines)[i_]);                                                         \
    } while (0)

static struct profile_stream_header header_example(void)
{
    return (struct profile_stream_header){ .run = 0x0f2e3d4c, .seq = 17, .first = 850, .samples = 9,
                                           .ring_dropped = 3, .unsent = 4, .time_ns = 5123456789,
                                           .source = "tick", .period = 1000000, .unit = PROFILE_UNIT_NS,
                                           .cpus = 4, .build_id = "9f0ce1" };
}

static void test_header_and_end_text(void **state)
{
    (void)state;
    char buf[PROFILE_STREAM_HEADER_MAX];
    struct profile_stream_header h = header_example();
    size_t n = profile_stream_format_header(&h, buf, sizeof buf);
    const char *want = "# kprof stream v2 run=0f2e3d4c seq=17 first=850 samples=9 ring_dropped=3 unsent=4 "
                       "time_ns=5123456789 source=tick period=1000000 unit=ns cpus=4 build_id=9f0ce1\n";
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
    h.build_id[0] = 0;
    h.time_ns = -5;
    profile_stream_format_header(&h, buf, sizeof buf);
    assert_non_null(strstr(buf, " time_ns=-5 "));
    assert_non_null(strstr(buf, " build_id=none\n"));

    struct profile_stream_end e = { 0xabcdef01, 912, 40210, 7, 2, PROFILE_STREAM_TIME };
    n = profile_stream_format_end(&e, buf, sizeof buf);
    want = "# kprof stream end run=abcdef01 seq=912 produced=40210 ring_dropped=7 unsent=2 reason=time\n";
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));

    /* refused rather than cut, and never a bad field */
    h = header_example();
    assert_int_equal(profile_stream_format_header(&h, buf, 40), 0);
    h.samples = PROFILE_STREAM_DATAGRAM_SAMPLES + 1;
    assert_int_equal(profile_stream_format_header(&h, buf, sizeof buf), 0);
    h = header_example();
    strcpy(h.source, "two words");
    assert_int_equal(profile_stream_format_header(&h, buf, sizeof buf), 0);
    h = header_example();
    strcpy(h.build_id, "ABC");
    assert_int_equal(profile_stream_format_header(&h, buf, sizeof buf), 0);
    e.reason = (enum profile_stream_reason)9;
    assert_int_equal(profile_stream_format_end(&e, buf, sizeof buf), 0);
}

static void expect_same_header(const struct profile_stream_header *a, const struct profile_stream_header *b)
{
    assert_int_equal(a->run, b->run);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->first, b->first);
    assert_int_equal(a->samples, b->samples);
    assert_int_equal(a->ring_dropped, b->ring_dropped);
    assert_int_equal(a->unsent, b->unsent);
    assert_int_equal(a->time_ns, b->time_ns);
    assert_string_equal(a->source, b->source);
    assert_int_equal(a->period, b->period);
    assert_int_equal(a->unit, b->unit);
    assert_int_equal(a->cpus, b->cpus);
    assert_string_equal(a->build_id, b->build_id);
}

static void test_round_trips_over_the_extremes(void **state)
{
    (void)state;
    char buf[PROFILE_STREAM_HEADER_MAX];
    struct profile_stream_header back;
    struct profile_stream_header h = { .run = 0, .seq = UINT64_MAX, .first = UINT64_MAX,
                                       .samples = PROFILE_STREAM_DATAGRAM_SAMPLES, .ring_dropped = UINT64_MAX,
                                       .unsent = UINT64_MAX, .time_ns = INT64_MIN, .period = UINT64_MAX,
                                       .unit = PROFILE_UNIT_CYCLES, .cpus = UINT32_MAX };
    memset(h.source, 'x', PROFILE_RAW_SOURCE_MAX - 1);
    h.source[PROFILE_RAW_SOURCE_MAX - 1] = 0;
    memset(h.build_id, 'f', 2 * PROFILE_BUILD_ID_MAX);
    h.build_id[2 * PROFILE_BUILD_ID_MAX] = 0;
    size_t n = profile_stream_format_header(&h, buf, sizeof buf);
    assert_true(n > 0 && n < PROFILE_STREAM_HEADER_MAX);
    memset(&back, 0x55, sizeof back);
    assert_true(profile_stream_parse_header(buf, n, &back));
    expect_same_header(&h, &back);

    struct profile_stream_end e = { UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, 0 }, eb;
    for (unsigned r = PROFILE_STREAM_STOPPED; r <= PROFILE_STREAM_ERROR; r++) {
        e.reason = (enum profile_stream_reason)r;
        n = profile_stream_format_end(&e, buf, sizeof buf);
        memset(&eb, 0x55, sizeof eb);
        assert_true(profile_stream_parse_end(buf, n, &eb));
        assert_int_equal(eb.run, e.run);
        assert_int_equal(eb.seq, e.seq);
        assert_int_equal(eb.produced, e.produced);
        assert_int_equal(eb.ring_dropped, e.ring_dropped);
        assert_int_equal(eb.unsent, e.unsent);
        assert_int_equal(eb.reason, e.reason);
        assert_false(profile_stream_parse_header(buf, n, &back));
        /* every truncation is refused */
        for (size_t cut = 0; cut < n; cut++)
            assert_false(profile_stream_parse_end(buf, cut, &eb));
    }
    h = header_example();
    n = profile_stream_format_header(&h, buf, sizeof buf);
    for (size_t cut = 0; cut < n; cut++)
        assert_false(profile_stream_parse_header(buf, cut, &back));
}

static void test_garbled_lines_refused(void **state)
{
    (void)state;
    static const char *const headers[] = {
        "# kprof stream v1 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period_ns=1 cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=us cpus=1 build_id=none\n",
        "# kprof stream v2 run=f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0F2E3D4C seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=01 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1  first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=100 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=-0 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source= period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=4294967296 build_id=none\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=abc\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=ABCD\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none extra\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\r\n",
        "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1\n",
        "# kprof stream v2 run=0f2e3d4c seq=18446744073709551616 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 source=tick period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof raw v1 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=none\n",
    };
    struct profile_stream_header h;
    EXPECT_EACH_REFUSED(profile_stream_parse_header, headers, &h);
    const char *good = "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=0 ring_dropped=0 unsent=0 time_ns=1 "
                       "source=tick period=1 unit=ns cpus=1 build_id=none\n";
    assert_true(profile_stream_parse_header(good, strlen(good), &h));
    assert_string_equal(h.build_id, "");

    static const char *const ends[] = {
        "# kprof stream end run=0f2e3d4c seq=1 produced=2 ring_dropped=0 unsent=0 reason=bored\n",
        "# kprof stream end run=0f2e3d4c seq=1 produced=2 ring_dropped=0 unsent=0\n",
        "# kprof stream end run=0f2e3d4c seq=1 produced=2 ring_dropped=0 unsent=0 reason=time \n",
        "# kprof stream end run=0f2e3d4c seq=1 produced=02 ring_dropped=0 unsent=0 reason=time\n",
        "# kprof stream end run=0f2e3d4c seq=1 produced=2 ring_dropped=0 unsent=0 reason=time",
    };
    struct profile_stream_end e;
    EXPECT_EACH_REFUSED(profile_stream_parse_end, ends, &e);
}

/* ---- synthetic rings and a capturing sender ------------------------------------------------------------ */

#define CPUS 4
#define RING 256
static struct profile_record storage[CPUS][RING];
static struct profile_ring rings[CPUS];
static struct profile_run run;

#define MAX_SENT 512
static struct {
    char data[PROFILE_STREAM_DATAGRAM_MAX + 1];
    size_t len;
    bool ok;
} sent[MAX_SENT];
static unsigned nsent;
static unsigned fail_from = UINT32_MAX, fail_count; /* datagrams [fail_from, fail_from + fail_count) fail */

static bool capture(void *arg, const char *data, size_t len)
{
    (void)arg;
    assert_true(nsent < MAX_SENT);
    assert_true(len <= PROFILE_STREAM_DATAGRAM_MAX);
    memcpy(sent[nsent].data, data, len);
    sent[nsent].len = len;
    bool ok = !(nsent >= fail_from && nsent - fail_from < fail_count);
    sent[nsent].ok = ok;
    nsent++;
    return ok;
}

static void setup_run(void)
{
    memset(&run, 0, sizeof run);
    for (unsigned cpu = 0; cpu < CPUS; cpu++)
        profile_ring_init(&rings[cpu], storage[cpu], RING, 0xfffffff0u); /* the indexes wrap in every test */
    run.rings = rings;
    run.ncpus = CPUS;
    run.run = 7;
    run.source = run.source_name = "tick";
    run.period_ns = 1000000;
    run.tick_reason = "no usable PMU";
    nsent = 0;
    fail_from = UINT32_MAX;
    fail_count = 0;
}

/* A record of the widest kind: 8 frames of 16 hex digits, unless frames says fewer. */
static bool push(unsigned cpu, uint32_t pid, int64_t t, const struct label_set *labels, unsigned frames)
{
    struct profile_record *r = profile_ring_reserve(&rings[cpu]);
    if (!r)
        return false;
    *r = (struct profile_record){ .labels = labels, .labels_generation = labels ? labels->generation : 0,
                                  .time_ns = t, .pid = pid, .run = run.run, .cpu = (uint16_t)cpu,
                                  .nframes = (uint8_t)frames };
    for (unsigned i = 0; i < frames; i++)
        r->frames[i] = 0xffffffff80000000ull + (uint64_t)t * 16 + i;
    profile_ring_commit(&rings[cpu]);
    return true;
}

struct collected {
    uint64_t count;
    int64_t times[4096];
    const char *labels_of[4096]; /* "k=v" of each sample, or "-" */
    char label_text[4096][LABEL_SET_TEXT_MAX];
};
static struct collected got;

static void collect(void *arg, const struct profile_raw_sample *s)
{
    (void)arg;
    assert_true(got.count < ARRAY_LEN(got.times));
    got.times[got.count] = s->time_ns;
    label_set_format(s->labels.npairs ? &s->labels : NULL, got.label_text[got.count], LABEL_SET_TEXT_MAX);
    got.count++;
}

/* Parses every datagram captured: each valid, seq rising by one, first following on from the previous one
 * (failed sends included, their samples being a gap the header's unsent explains). Returns the samples
 * parsed from datagrams that were sent. */
static uint64_t check_datagrams(uint64_t *ring_dropped, uint64_t *unsent)
{
    memset(&got, 0, sizeof got);
    uint64_t next_first = 0, lost_to_send = 0;
    uint64_t expect_seq = 0;
    for (unsigned i = 0; i < nsent; i++) {
        struct profile_stream_datagram d;
        if (!sent[i].ok) {
            /* its samples are lost to the send; parse them aside to know how many */
            struct collected keep = got;
            assert_true(profile_stream_parse_datagram(sent[i].data, sent[i].len, &d, 0, 0));
            got = keep;
            if (!d.is_end) {
                assert_int_equal(d.header.first, next_first);
                next_first += d.header.samples;
                lost_to_send += d.header.samples;
                expect_seq++;
            }
            continue;
        }
        assert_true(profile_stream_parse_datagram(sent[i].data, sent[i].len, &d, collect, 0));
        if (d.is_end) {
            assert_int_equal(d.end.seq, expect_seq);
            assert_int_equal(d.end.produced, next_first + d.end.ring_dropped);
            assert_int_equal(d.end.unsent, lost_to_send);
            *ring_dropped = d.end.ring_dropped;
            *unsent = d.end.unsent;
            continue;
        }
        assert_int_equal(d.header.seq, expect_seq);
        assert_int_equal(d.header.first, next_first);
        assert_int_equal(d.header.unsent, lost_to_send);
        assert_int_equal(d.header.run, 0x1234abcd);
        next_first += d.header.samples;
        expect_seq++;
    }
    return got.count;
}

static void test_packing_never_over_one_frame_and_gap_free(void **state)
{
    (void)state;
    setup_run();
    /* labels of the widest kind: four pairs of the longest keys and values */
    struct label_pair pairs[LABEL_MAX_PAIRS];
    for (unsigned i = 0; i < LABEL_MAX_PAIRS; i++) {
        memset(pairs[i].key, 'a' + i, LABEL_KEY_MAX);
        pairs[i].key[LABEL_KEY_MAX] = 0;
        memset(pairs[i].value, 'v', LABEL_VALUE_MAX);
        pairs[i].value[LABEL_VALUE_MAX] = 0;
    }
    const struct label_set *wide = label_intern(pairs, LABEL_MAX_PAIRS, 0);
    assert_non_null(wide);
    struct profile_streamer s;
    profile_streamer_init(&s, 0x1234abcd, &run, "00ff", capture, 0, 0);
    uint64_t pushed = 0;
    for (int round = 0; round < 3; round++) {
        for (unsigned cpu = 0; cpu < CPUS; cpu++)
            for (unsigned i = 0; i < 200; i++, pushed++)
                assert_true(push(cpu, 10 + cpu, (int64_t)pushed, i % 3 ? wide : NULL, i % 2 ? 8 : 1 + i % 8));
        profile_streamer_drain(&s, &run, NULL, 1000 + round);
    }
    struct profile_stream_end end;
    profile_streamer_finish(&s, PROFILE_STREAM_STOPPED, 5000, &end);
    uint64_t dropped = 99, unsent = 99;
    assert_int_equal(check_datagrams(&dropped, &unsent), pushed);
    assert_int_equal(dropped, 0);
    assert_int_equal(unsent, 0);
    assert_int_equal(end.produced, pushed);
    assert_int_equal(s.sent, pushed);
    /* the end line went out three times, with one seq */
    assert_int_equal(sent[nsent - 1].len, sent[nsent - 3].len);
    assert_memory_equal(sent[nsent - 1].data, sent[nsent - 3].data, sent[nsent - 1].len);
    assert_memory_equal(sent[nsent - 2].data, sent[nsent - 3].data, sent[nsent - 1].len);
    /* in drain order: each CPU's samples in its ring's order */
    for (uint64_t i = 0; i < got.count; i++)
        assert_int_equal(got.times[i], (int64_t)i);
    /* a datagram is filled before the next begins: all but each drain's last come near the limit */
    unsigned near_full = 0;
    for (unsigned i = 0; i < nsent; i++)
        near_full += sent[i].len > PROFILE_STREAM_DATAGRAM_MAX - PROFILE_RAW_LINE_MAX;
    assert_true(near_full >= nsent - 3 - 3);
}

static void test_failed_sends_and_full_rings_are_accounted(void **state)
{
    (void)state;
    setup_run();
    struct profile_streamer s;
    profile_streamer_init(&s, 0x1234abcd, &run, "", capture, 0, 0);
    /* cpu 0 overflows its ring by 44; cpu 1 holds 100 */
    unsigned refused = 0;
    for (unsigned i = 0; i < RING + 44; i++)
        refused += !push(0, 1, i, NULL, 3);
    assert_int_equal(refused, 44);
    for (unsigned i = 0; i < 100; i++)
        push(1, 2, 10000 + i, NULL, 3);
    fail_from = 2;
    fail_count = 2; /* the third and fourth datagrams fail */
    profile_streamer_drain(&s, &run, NULL, 10);
    assert_int_equal(s.ring_dropped, 44);
    assert_int_equal(s.drained, RING + 100);
    struct profile_stream_end end;
    profile_streamer_finish(&s, PROFILE_STREAM_ERROR, 20, &end);
    uint64_t dropped, unsent;
    uint64_t received = check_datagrams(&dropped, &unsent);
    assert_int_equal(dropped, 44);
    assert_true(unsent > 0);
    assert_int_equal(s.unsent, unsent);
    assert_int_equal(s.send_failures, 2);
    assert_int_equal(received + dropped + unsent, end.produced);
    assert_int_equal(end.produced, RING + 44 + 100);
    assert_int_equal(end.reason, PROFILE_STREAM_ERROR);
}

static void test_stragglers_and_the_pid_filter(void **state)
{
    (void)state;
    setup_run();
    struct profile_streamer s;
    profile_streamer_init(&s, 0x1234abcd, &run, "", capture, 0, 0);
    push(0, 5, 1, NULL, 2);
    push(0, 6, 2, NULL, 2);
    run.run = 6; /* a record of an earlier run, committed late */
    push(1, 5, 3, NULL, 2);
    run.run = 7;
    push(2, 5, 4, NULL, 2);
    struct profile_filter only5 = { .by_pid = true, .pid = 5 };
    profile_streamer_drain(&s, &run, &only5, 1);
    struct profile_stream_end end;
    profile_streamer_finish(&s, PROFILE_STREAM_STOPPED, 2, &end);
    uint64_t dropped, unsent;
    assert_int_equal(check_datagrams(&dropped, &unsent), 2);
    assert_int_equal(got.times[0], 1);
    assert_int_equal(got.times[1], 4);
    assert_int_equal(end.produced, 2);
    for (unsigned cpu = 0; cpu < CPUS; cpu++)
        assert_int_equal(profile_ring_count(&rings[cpu]), 0); /* consumed, wanted or not */
}

static void test_heartbeat_every_second(void **state)
{
    (void)state;
    setup_run();
    struct profile_streamer s;
    profile_streamer_init(&s, 0x1234abcd, &run, "", capture, 0, 1000);
    profile_streamer_drain(&s, &run, NULL, 500000000);
    profile_streamer_heartbeat(&s, 999999999 + 1000);
    assert_int_equal(nsent, 0);
    profile_streamer_heartbeat(&s, 1000000000 + 1000);
    assert_int_equal(nsent, 1);
    struct profile_stream_datagram d;
    assert_true(profile_stream_parse_datagram(sent[0].data, sent[0].len, &d, 0, 0));
    assert_false(d.is_end);
    assert_int_equal(d.header.samples, 0);
    assert_int_equal(d.header.seq, 0);
    assert_int_equal(d.header.time_ns, 1000001000);
    /* samples sent meanwhile put the next heartbeat off */
    push(3, 1, 5, NULL, 1);
    profile_streamer_drain(&s, &run, NULL, 1500000000);
    assert_int_equal(nsent, 2);
    profile_streamer_heartbeat(&s, 2400000000);
    assert_int_equal(nsent, 2);
    profile_streamer_heartbeat(&s, 2500000000);
    assert_int_equal(nsent, 3);
    assert_true(profile_stream_parse_datagram(sent[2].data, sent[2].len, &d, 0, 0));
    assert_int_equal(d.header.samples, 0);
    assert_int_equal(d.header.first, 1);
    assert_int_equal(d.header.seq, 2);
}

/* The seed's concern: a label set changed while streaming applies to the samples taken after the change and
 * to none before. The records carry the set the task had at sample time; the stream must keep it per sample
 * across drains, datagram boundaries and the change itself. */
static void test_label_change_mid_stream(void **state)
{
    (void)state;
    setup_run();
    const struct label_set *a = label_intern_one("interval", "a", 0);
    const struct label_set *b = label_intern_one("interval", "b", 0);
    assert_non_null(a);
    assert_non_null(b);
    struct profile_streamer s;
    profile_streamer_init(&s, 0x1234abcd, &run, "", capture, 0, 0);
    const int64_t change = 150;
    for (int64_t t = 0; t < 300; t++) {
        push((unsigned)t % CPUS, 9, t, t < change ? a : b, 4);
        if (t % 37 == 36)
            profile_streamer_drain(&s, &run, NULL, t); /* the change falls inside a drain and a datagram */
    }
    profile_streamer_drain(&s, &run, NULL, 399);
    struct profile_stream_end end;
    profile_streamer_finish(&s, PROFILE_STREAM_STOPPED, 400, &end);
    uint64_t dropped, unsent;
    assert_int_equal(check_datagrams(&dropped, &unsent), 300);
    unsigned before = 0, after = 0;
    for (uint64_t i = 0; i < got.count; i++) {
        if (got.times[i] < change) {
            assert_string_equal(got.label_text[i], "interval=a");
            before++;
        } else {
            assert_string_equal(got.label_text[i], "interval=b");
            after++;
        }
    }
    assert_int_equal(before, change);
    assert_int_equal(after, 300 - change);
}

static void test_datagram_parser_is_strict(void **state)
{
    (void)state;
    const char *h1 = "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=1 ring_dropped=0 unsent=0 time_ns=1 "
                     "source=tick period=1 unit=ns cpus=1 build_id=none\n";
    const char *h2 = "# kprof stream v2 run=0f2e3d4c seq=1 first=0 samples=2 ring_dropped=0 unsent=0 time_ns=1 "
                     "source=tick period=1 unit=ns cpus=1 build_id=none\n";
    const char *line = "s 0 1 5 - 1 - 0x10\n";
    char buf[2048];
    struct profile_stream_datagram d;
    snprintf(buf, sizeof buf, "%s%s", h1, line);
    assert_true(profile_stream_parse_datagram(buf, strlen(buf), &d, 0, 0));
    snprintf(buf, sizeof buf, "%s%s", h2, line); /* one sample short */
    assert_false(profile_stream_parse_datagram(buf, strlen(buf), &d, 0, 0));
    snprintf(buf, sizeof buf, "%s%s%s", h1, line, line); /* one too many */
    assert_false(profile_stream_parse_datagram(buf, strlen(buf), &d, 0, 0));
    snprintf(buf, sizeof buf, "%ss 0 1 5 - 0x10\r\n", h1);
    assert_false(profile_stream_parse_datagram(buf, strlen(buf), &d, 0, 0));
    snprintf(buf, sizeof buf, "%s", line);
    assert_false(profile_stream_parse_datagram(buf, strlen(buf), &d, 0, 0));
    const char *end = "# kprof stream end run=0f2e3d4c seq=1 produced=2 ring_dropped=0 unsent=0 reason=stopped\n";
    assert_true(profile_stream_parse_datagram(end, strlen(end), &d, 0, 0));
    assert_true(d.is_end);
    snprintf(buf, sizeof buf, "%s%s", end, line);
    assert_false(profile_stream_parse_datagram(buf, strlen(buf), &d, 0, 0));
    /* over one frame: refused whatever it holds */
    memset(buf, 'x', sizeof buf);
    snprintf(buf, sizeof buf, "%s", end);
    assert_false(profile_stream_parse_datagram(buf, PROFILE_STREAM_DATAGRAM_MAX + 1, &d, 0, 0));
    assert_false(profile_stream_parse_datagram(buf, 0, &d, 0, 0));
}

UNIT_MAIN(NULL, NULL,
          test_header_and_end_text, test_round_trips_over_the_extremes, test_garbled_lines_refused,
          test_packing_never_over_one_frame_and_gap_free, test_failed_sends_and_full_rings_are_accounted,
          test_stragglers_and_the_pid_filter, test_heartbeat_every_second, test_label_change_mid_stream,
          test_datagram_parser_is_strict)
