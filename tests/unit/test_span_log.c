/* tests/unit/test_span_log.c: the span logs `burn spans` and `work spans` read (kernel/workload/span_log.c) --
 * span ids unique and never 0; entries read back whole, a page of SPAN_LOG_PER_READ at a time with where to read
 * on; a reader that fell behind told how many it lost and given the newest it can still read; the ring's indexes
 * far from 0 and wrapping round the array on purpose; an entry being written (or overwritten a ring ahead) ending
 * the page rather than printed half; a FROM past the end answered with nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "unit_main.h"
#include "kernel/lib/sink.h"
#include "kernel/workload/span_log.h"

#define CAPACITY 80 /* 16 readable beyond a page's room */

static struct span_entry entries[CAPACITY];
static struct span_log log_under_test = SPAN_LOG_OVER(entries);
static char text[16384];

static int reset(void **state)
{
    (void)state;
    memset(entries, 0, sizeof entries);
    atomic_store(&log_under_test.next, 0);
    return 0;
}

/* span_log_print's whole answer. */
static const char *print_from(uint64_t from)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    span_log_print(&log_under_test, from, "work", &bs.sink);
    assert_int_equal(bs.truncated, 0);
    return text;
}

/* Entry i of a test's log: pid 100 + i % 7, span 1000 + i, figures i and -i. */
static void add_entries(uint64_t first, uint64_t n)
{
    for (uint64_t i = first; i < first + n; i++)
        span_log_add(&log_under_test, 100 + (uint32_t)(i % 7), 1000 + i, (int64_t)i, -(int64_t)i);
}

/* The lines entries [from, to) should print, then the trailer. */
static const char *expected(uint64_t from, uint64_t to, uint64_t next, uint64_t lost)
{
    static char want[16384];
    size_t n = 0;
    for (uint64_t i = from; i < to; i++)
        n += (size_t)snprintf(want + n, sizeof want - n, "span %u %llu %lld %lld\n", 100 + (unsigned)(i % 7),
                              (unsigned long long)(1000 + i), (long long)i, -(long long)i);
    snprintf(want + n, sizeof want - n, "work spans: next %llu lost %llu\n", (unsigned long long)next,
             (unsigned long long)lost);
    return want;
}

static void test_span_ids_are_new_and_never_zero(void **state)
{
    (void)state;
    uint64_t last = span_new();
    assert_true(last != 0);
    for (int i = 0; i < 1000; i++) {
        uint64_t id = span_new();
        assert_true(id > last);
        last = id;
    }
}

static void test_entries_come_back_whole_in_order(void **state)
{
    (void)state;
    assert_string_equal(print_from(0), "work spans: next 0 lost 0\n");
    add_entries(0, 5);
    assert_int_equal(span_log_next(&log_under_test), 5);
    assert_string_equal(print_from(0), expected(0, 5, 5, 0));
    assert_string_equal(print_from(3), expected(3, 5, 5, 0));
    assert_string_equal(print_from(5), expected(5, 5, 5, 0));
}

static void test_a_page_at_a_time(void **state)
{
    (void)state;
    static struct span_entry big_entries[200];
    static struct span_log big = SPAN_LOG_OVER(big_entries);
    for (uint64_t i = 0; i < 130; i++)
        span_log_add(&big, 1, i + 1, 0, 0);
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    span_log_print(&big, 0, "burn", &bs.sink);
    assert_non_null(strstr(text, "span 1 64 0 0\nburn spans: next 64 lost 0\n"));
    buffer_sink_init(&bs, text, sizeof text);
    span_log_print(&big, 64, "burn", &bs.sink);
    assert_true(strncmp(text, "span 1 65 0 0\n", 14) == 0);
    assert_non_null(strstr(text, "span 1 128 0 0\nburn spans: next 128 lost 0\n"));
    buffer_sink_init(&bs, text, sizeof text);
    span_log_print(&big, 128, "burn", &bs.sink);
    assert_string_equal(text, "span 1 129 0 0\nspan 1 130 0 0\nburn spans: next 130 lost 0\n");
}

static void test_a_reader_that_fell_behind_is_told(void **state)
{
    (void)state;
    add_entries(0, 100); /* 100 into 80 slots, 16 of which are readable */
    assert_string_equal(print_from(0), expected(84, 100, 100, 84));
    assert_string_equal(print_from(83), expected(84, 100, 100, 1));
    assert_string_equal(print_from(84), expected(84, 100, 100, 0));
}

static void test_indexes_far_from_zero_wrap_round_the_ring(void **state)
{
    (void)state;
    /* base % 80 is 78: the writes wrap round the array at once, and the 16 readable cross its end again */
    const uint64_t base = (1ull << 40) + 62;
    atomic_store(&log_under_test.next, base);
    add_entries(base, 80 + 3);
    uint64_t next = base + 83;
    assert_int_equal(span_log_next(&log_under_test), next);
    assert_string_equal(print_from(base), expected(next - 16, next, next, 83 - 16));
    assert_string_equal(print_from(next - 16), expected(next - 16, next, next, 0));
}

static void test_an_entry_being_written_ends_the_page(void **state)
{
    (void)state;
    add_entries(0, 4);
    atomic_store(&entries[2].seq, 0); /* a writer between claiming entry 2 and publishing it */
    assert_string_equal(print_from(0), expected(0, 2, 2, 0));
    atomic_store(&entries[2].seq, 3);
    assert_string_equal(print_from(2), expected(2, 4, 4, 0));
}

static void test_an_entry_overwritten_under_the_reader_ends_the_page(void **state)
{
    (void)state;
    add_entries(0, 10);
    /* entry 5's slot already holds entry 85, a writer a whole ring ahead of what this read saw as the end */
    atomic_store(&entries[5].seq, 86);
    assert_string_equal(print_from(0), expected(0, 5, 5, 0));
}

static void test_from_past_the_end_prints_nothing(void **state)
{
    (void)state;
    add_entries(0, 3);
    assert_string_equal(print_from(1000), "work spans: next 3 lost 0\n");
}

UNIT_MAIN_EACH(reset, NULL, NULL, NULL, test_span_ids_are_new_and_never_zero, test_entries_come_back_whole_in_order,
               test_a_page_at_a_time, test_a_reader_that_fell_behind_is_told,
               test_indexes_far_from_zero_wrap_round_the_ring, test_an_entry_being_written_ends_the_page,
               test_an_entry_overwritten_under_the_reader_ends_the_page, test_from_past_the_end_prints_nothing)
