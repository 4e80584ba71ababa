/* tests/unit/test_netload_proto.c: kernel/net/netload_proto.c -- the datagram codec byte for byte (round trip,
 * truncated, garbled), and the receiver's accounting of loss, reordering and duplicates, across the edge of
 * its window and across a wrap of the 64-bit sequence number, checked against a simulated lossy link. Then the
 * rates and the exact report lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/net/netload_proto.h"
#include "kernel/lib/sink.h"
#include "unit_main.h"

#define UDP_MAX 65507

static unsigned char buf[UDP_MAX + 16];

static void test_header_layout(void **state)
{
    (void)state;
    assert_int_equal(netload_encode(buf, sizeof buf, 0x0102030405060708ull, 0x1112131415161718ull, 32), 32);
    static const unsigned char want[32] = {
        'K', 'P', 'N', 'L', 0, 0, 0, 1,                   /* magic, version */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,   /* sequence */
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,   /* send time */
        0, 0, 0, 32,                                      /* size */
        28, 29, 30, 31,                                   /* filler: offset & 0xff */
    };
    assert_memory_equal(buf, want, sizeof want);
}

static void test_round_trip(void **state)
{
    (void)state;
    uint32_t sizes[] = {NETLOAD_HEADER_SIZE, NETLOAD_HEADER_SIZE + 1, 512, NETLOAD_SIZE_DEFAULT, NETLOAD_SIZE_MAX,
                        UDP_MAX};
    uint64_t seqs[] = {0, 1, 0xffffffffull, UINT64_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t j = 0; j < sizeof seqs / sizeof seqs[0]; j++) {
            memset(buf, 0xee, sizeof buf);
            uint64_t ts = seqs[j] * 3 + 12345;
            assert_int_equal(netload_encode(buf, sizeof buf, seqs[j], ts, sizes[i]), sizes[i]);
            /* Nothing written past the datagram. */
            assert_int_equal(buf[sizes[i]], 0xee);
            for (uint32_t k = NETLOAD_HEADER_SIZE; k < sizes[i]; k++)
                assert_int_equal(buf[k], k & 0xff);
            struct netload_header h;
            assert_int_equal(netload_decode(buf, sizes[i], &h), NETLOAD_OK);
            assert_int_equal(h.seq, seqs[j]);
            assert_int_equal(h.send_ns, ts);
            assert_int_equal(h.size, sizes[i]);
        }
    }
}

static void test_encode_refuses_bad_sizes(void **state)
{
    (void)state;
    memset(buf, 0xee, sizeof buf);
    assert_int_equal(netload_encode(buf, sizeof buf, 1, 2, 0), 0);
    assert_int_equal(netload_encode(buf, sizeof buf, 1, 2, NETLOAD_HEADER_SIZE - 1), 0);
    assert_int_equal(netload_encode(buf, 100, 1, 2, 101), 0);
    assert_int_equal(netload_encode(buf, 27, 1, 2, 28), 0);
    for (size_t i = 0; i < 200; i++)
        assert_int_equal(buf[i], 0xee);
    assert_int_equal(netload_encode(buf, 100, 1, 2, 100), 100);
}

static void test_stamp_rewrites_sequence_and_time_only(void **state)
{
    (void)state;
    assert_int_equal(netload_encode(buf, sizeof buf, 0, 0, 200), 200);
    static unsigned char before[200];
    memcpy(before, buf, sizeof before);
    netload_stamp(buf, 42, 0xabcdef);
    struct netload_header h;
    assert_int_equal(netload_decode(buf, 200, &h), NETLOAD_OK);
    assert_int_equal(h.seq, 42);
    assert_int_equal(h.send_ns, 0xabcdef);
    assert_memory_equal(buf, before, 8);
    assert_memory_equal(buf + 24, before + 24, 200 - 24);
}

static void test_decode_refuses_short(void **state)
{
    (void)state;
    assert_int_equal(netload_encode(buf, sizeof buf, 9, 9, 1024), 1024);
    struct netload_header h = {.seq = 77, .send_ns = 77, .size = 77};
    for (size_t len = 0; len < NETLOAD_HEADER_SIZE; len++)
        assert_int_equal(netload_decode(buf, len, &h), NETLOAD_SHORT);
    /* Truncated after the header: the size field no longer matches. */
    assert_int_equal(netload_decode(buf, NETLOAD_HEADER_SIZE, &h), NETLOAD_BAD_SIZE);
    assert_int_equal(netload_decode(buf, 1023, &h), NETLOAD_BAD_SIZE);
    /* And longer than it says. */
    assert_int_equal(netload_decode(buf, 1025, &h), NETLOAD_BAD_SIZE);
    /* A refused datagram fills nothing in. */
    assert_int_equal(h.seq, 77);
    assert_int_equal(h.send_ns, 77);
    assert_int_equal(h.size, 77);
}

static void test_decode_refuses_garbled(void **state)
{
    (void)state;
    struct netload_header h;
    assert_int_equal(netload_encode(buf, sizeof buf, 9, 9, 64), 64);
    buf[0] = 'k';
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_BAD_MAGIC);
    buf[0] = 'K';
    buf[3] = 'X';
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_BAD_MAGIC);
    buf[3] = 'L';
    buf[7] = 2;
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_BAD_VERSION);
    buf[7] = 1;
    buf[4] = 1;
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_BAD_VERSION);
    buf[4] = 0;
    buf[24] = 0x80;
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_BAD_SIZE);
    buf[24] = 0;
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_OK);

    /* Garbage of every length up to a few headers: never accepted. */
    srand(1);
    for (size_t len = 0; len < 200; len++) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)rand();
        assert_int_not_equal(netload_decode(buf, len, &h), NETLOAD_OK);
    }
    /* A filler that is not the pattern is still taken: only the header is checked. */
    assert_int_equal(netload_encode(buf, sizeof buf, 9, 9, 64), 64);
    memset(buf + NETLOAD_HEADER_SIZE, 0, 64 - NETLOAD_HEADER_SIZE);
    assert_int_equal(netload_decode(buf, 64, &h), NETLOAD_OK);
}

static struct netload_rx_stats rx;

static void feed(const uint64_t *seqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        netload_rx_account(&rx, seqs[i], 100);
}

#define FEED(...)                                                                 \
    do {                                                                          \
        const uint64_t seqs_[] = {__VA_ARGS__};                                   \
        feed(seqs_, sizeof seqs_ / sizeof seqs_[0]);                              \
    } while (0)

static void expect_counts(uint64_t packets, uint64_t lost, uint64_t ooo, uint64_t dups)
{
    assert_int_equal(rx.packets, packets);
    assert_int_equal(rx.bytes, packets * 100);
    assert_int_equal(rx.lost, lost);
    assert_int_equal(rx.out_of_order, ooo);
    assert_int_equal(rx.duplicates, dups);
}

static void test_in_order(void **state)
{
    (void)state;
    netload_rx_init(&rx);
    expect_counts(0, 0, 0, 0);
    for (uint64_t s = 0; s < 5000; s++)
        netload_rx_account(&rx, s, 100);
    expect_counts(5000, 0, 0, 0);
    assert_int_equal(rx.highest, 4999);
}

static void test_loss(void **state)
{
    (void)state;
    netload_rx_init(&rx);
    FEED(0, 1, 5, 6, 10);
    expect_counts(5, 6, 0, 0);
    /* A first datagram after the start means the ones before it were lost. */
    netload_rx_init(&rx);
    FEED(3, 4);
    expect_counts(2, 3, 0, 0);
}

static void test_reorder(void **state)
{
    (void)state;
    netload_rx_init(&rx);
    FEED(0, 2, 1, 3);
    expect_counts(4, 0, 1, 0);
    FEED(7, 5, 6, 4);
    expect_counts(8, 0, 4, 0);
    /* Numbers before the first datagram, arriving late, come off lost. */
    netload_rx_init(&rx);
    FEED(2, 0, 1);
    expect_counts(3, 0, 2, 0);
}

static void test_duplicates(void **state)
{
    (void)state;
    netload_rx_init(&rx);
    FEED(0, 0, 1, 1, 1);
    expect_counts(5, 0, 0, 3);
    FEED(4, 2, 2, 4, 3);
    expect_counts(10, 0, 1 + 1, 3 + 2);
    /* A duplicate of a reordered one is a duplicate, and does not come off lost twice. */
    netload_rx_init(&rx);
    FEED(0, 5, 3, 3);
    expect_counts(4, 3, 1, 1);
}

static void test_window_edge(void **state)
{
    (void)state;
    netload_rx_init(&rx);
    uint64_t top = 5000;
    FEED(0, top);
    expect_counts(2, top - 1, 0, 0);
    /* The oldest number still in the window is credited; the next older is late and stays lost. */
    FEED(top - (NETLOAD_WINDOW - 1));
    expect_counts(3, top - 2, 1, 0);
    assert_int_equal(rx.late, 0);
    FEED(top - NETLOAD_WINDOW);
    expect_counts(4, top - 2, 2, 0);
    assert_int_equal(rx.late, 1);
    /* Too old to tell: a repeat of a late one is late again, not a duplicate. */
    FEED(top - NETLOAD_WINDOW);
    expect_counts(5, top - 2, 3, 0);
    assert_int_equal(rx.late, 2);
    /* Duplicates within the window are still seen. */
    FEED(top - (NETLOAD_WINDOW - 1), top);
    expect_counts(7, top - 2, 3, 2);
}

static void test_jumps_clear_the_window(void **state)
{
    (void)state;
    /* A jump shorter than the window forgets the slots of the numbers it skipped: 0..W-1 all arrived, then
     * W+5 reuses slots 0..4 for W..W+4, and W+2 arriving late is news, not a duplicate of 2. */
    netload_rx_init(&rx);
    for (uint64_t s = 0; s < NETLOAD_WINDOW; s++)
        netload_rx_account(&rx, s, 100);
    FEED(NETLOAD_WINDOW + 5);
    expect_counts(NETLOAD_WINDOW + 1, 5, 0, 0);
    FEED(NETLOAD_WINDOW + 2);
    expect_counts(NETLOAD_WINDOW + 2, 4, 1, 0);
    FEED(NETLOAD_WINDOW + 2);
    expect_counts(NETLOAD_WINDOW + 3, 4, 1, 1);

    /* A jump of the window or more forgets everything: 100 arrived, then 101 + 2W; 100 + 2W (100's slot,
     * inside the new window) is news. */
    netload_rx_init(&rx);
    FEED(0, 100);
    expect_counts(2, 99, 0, 0);
    FEED(101 + 2 * NETLOAD_WINDOW);
    uint64_t lost = 99 + 2 * NETLOAD_WINDOW;
    expect_counts(3, lost, 0, 0);
    FEED(100 + 2 * NETLOAD_WINDOW);
    lost--;
    expect_counts(4, lost, 1, 0);
    FEED(100 + 2 * NETLOAD_WINDOW);
    expect_counts(5, lost, 1, 1);
    /* A jump of exactly the window. */
    FEED(101 + 3 * NETLOAD_WINDOW);
    lost += NETLOAD_WINDOW - 1;
    expect_counts(6, lost, 1, 1);
    FEED(101 + 2 * NETLOAD_WINDOW);
    expect_counts(7, lost, 2, 1);
    assert_int_equal(rx.late, 1);
}

/* A receiver that has followed a run up to seq, its counters then zeroed: the run climbs there in steps below
 * 2^63 (each one ahead in serial arithmetic). */
static void start_at(uint64_t seq)
{
    netload_rx_init(&rx);
    FEED(0, 1ull << 62, 2ull << 62, 3ull << 62, seq);
    assert_int_equal(rx.highest, seq);
    rx.packets = rx.bytes = rx.lost = rx.out_of_order = rx.duplicates = rx.late = 0;
}

static void test_sequence_wrap(void **state)
{
    (void)state;
    /* Straight across the wrap, in order. */
    start_at(UINT64_MAX - 2);
    FEED(UINT64_MAX - 1, UINT64_MAX, 0, 1);
    expect_counts(4, 0, 0, 0);
    assert_int_equal(rx.highest, 1);
    /* A gap across the wrap, then the missing ones late, then repeats. */
    start_at(UINT64_MAX - 1);
    FEED(2);
    expect_counts(1, 3, 0, 0);
    FEED(UINT64_MAX, 0);
    expect_counts(3, 1, 2, 0);
    FEED(UINT64_MAX, UINT64_MAX - 1, 2);
    expect_counts(6, 1, 2, 3);
    FEED(1);
    expect_counts(7, 0, 3, 3);
}

static void test_counters_never_wrap_below_zero(void **state)
{
    (void)state;
    netload_rx_init(&rx);
    /* The very first datagram carries the number "before 0": behind the start, never counted lost. */
    FEED(UINT64_MAX);
    expect_counts(1, 0, 1, 0);
    FEED(0);
    expect_counts(2, 0, 1, 0);
}

/* A deterministic lossy, reordering, duplicating link: the receiver's counts must match what it did. */
static void test_simulated_link(void **state)
{
    (void)state;
    enum { N = 20000 };
    static uint64_t arrivals[2 * N];
    static bool delivered[N];
    size_t n = 0;
    uint64_t dropped = 0, duplicated = 0;
    memset(delivered, 0, sizeof delivered);
    srand(7);
    for (uint64_t s = 0; s < N; s++) {
        int r = rand() % 100;
        if (r < 5 && s + 1 < N) {
            dropped++;
            continue;
        }
        arrivals[n++] = s;
        delivered[s] = true;
        if (r >= 97) {
            arrivals[n++] = s;
            duplicated++;
        }
    }
    /* Swap neighbours now and then: reordering within a short distance, well inside the window. */
    size_t swaps = 0;
    for (size_t i = 0; i + 3 < n; i += 4) {
        if (rand() % 10 == 0 && arrivals[i] != arrivals[i + 3]) {
            uint64_t t = arrivals[i];
            arrivals[i] = arrivals[i + 3];
            arrivals[i + 3] = t;
            swaps++;
        }
    }
    assert_true(swaps > 100);
    netload_rx_init(&rx);
    feed(arrivals, n);
    assert_int_equal(rx.packets, n);
    assert_int_equal(rx.lost, dropped);
    assert_int_equal(rx.duplicates, duplicated);
    assert_true(rx.out_of_order > 0);
    assert_int_equal(rx.late, 0);
    assert_int_equal(rx.highest, N - 1);
}

static void test_per_second(void **state)
{
    (void)state;
    assert_int_equal(netload_per_second(1000, 2000000000), 500);
    assert_int_equal(netload_per_second(1000, 1000000000), 1000);
    assert_int_equal(netload_per_second(999, 1000000000), 999);
    assert_int_equal(netload_per_second(1, 3000000000), 0);
    assert_int_equal(netload_per_second(7, 1), 7000000000ull);
    assert_int_equal(netload_per_second(0, 1000000000), 0);
    assert_int_equal(netload_per_second(1000, 0), 0);
    assert_int_equal(netload_per_second(1000, -5), 0);
    /* Beyond count * 10^9 in 64 bits: millisecond resolution, no overflow. */
    assert_int_equal(netload_per_second(100000000000ull, 10000000000), 10000000000ull);
    assert_int_equal(netload_per_second(UINT64_MAX, 1000000000), UINT64_MAX / 1000 * 1000);
    assert_int_equal(netload_per_second(UINT64_MAX, 1), UINT64_MAX);
}

static void test_report_lines(void **state)
{
    (void)state;
    char text[256];
    struct buffer_sink bs;

    netload_rx_init(&rx);
    FEED(0, 2, 1, 1, 5);
    netload_rx_invalid(&rx);
    buffer_sink_init(&bs, text, sizeof text);
    netload_report_rx(&bs.sink, &rx, 2000000000);
    assert_string_equal(text, "packets 5 (2/s), bytes 500 (250/s), lost 2, out of order 1, duplicates 1, "
                              "invalid 1\n");

    netload_rx_init(&rx);
    buffer_sink_init(&bs, text, sizeof text);
    netload_report_rx(&bs.sink, &rx, 0);
    assert_string_equal(text, "packets 0 (0/s), bytes 0 (0/s), lost 0, out of order 0, duplicates 0, invalid 0\n");

    buffer_sink_init(&bs, text, sizeof text);
    netload_report_tx(&bs.sink, 30000, 30720000, 3000000000);
    assert_string_equal(text, "sent packets 30000 (10000/s), bytes 30720000 (10240000/s)\n");
}

UNIT_MAIN(NULL, NULL,
          test_header_layout, test_round_trip, test_encode_refuses_bad_sizes,
          test_stamp_rewrites_sequence_and_time_only, test_decode_refuses_short, test_decode_refuses_garbled,
          test_in_order, test_loss, test_reorder, test_duplicates, test_window_edge, test_jumps_clear_the_window,
          test_sequence_wrap, test_counters_never_wrap_below_zero, test_simulated_link, test_per_second,
          test_report_lines)
