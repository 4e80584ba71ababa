/* tests/unit/test_textbuf.c: kernel/lib/textbuf.h, the bounded text cursor under kvsnprintf, buffer_sink and the
 * raw format's writer -- appends that fit, an append cut at the last byte before the NUL (what did not fit
 * reported), a full buffer refusing everything, a zero-capacity one touching nothing, and the hex digit.
 * Every buffer has a guard byte after its end that must survive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernel/lib/hex.h"
#include "kernel/lib/textbuf.h"
#include "unit_main.h"

static void test_appends_that_fit(void **state)
{
    (void)state;
    char buf[9] = "XXXXXXXX";
    struct textbuf tb;
    textbuf_init(&tb, buf, 8);
    assert_string_equal(buf, "");
    assert_int_equal(textbuf_room(&tb), 7);
    assert_int_equal(textbuf_append(&tb, "abc", 3), 0);
    assert_int_equal(textbuf_append(&tb, "", 0), 0);
    assert_int_equal(textbuf_append(&tb, "de", 2), 0);
    assert_string_equal(buf, "abcde");
    assert_int_equal(tb.len, 5);
    assert_int_equal(textbuf_room(&tb), 2);
}

static void test_append_cut_at_the_end_reports_the_rest(void **state)
{
    (void)state;
    char buf[9];
    memset(buf, 'X', sizeof buf);
    struct textbuf tb;
    textbuf_init(&tb, buf, 8);
    assert_int_equal(textbuf_append(&tb, "0123456789", 10), 3);
    assert_int_equal(tb.len, 7);
    assert_memory_equal(buf, "0123456\0X", 9); /* the NUL in the last byte, the guard untouched */
    assert_int_equal(textbuf_room(&tb), 0);
    assert_int_equal(textbuf_append(&tb, "z", 1), 1); /* full: refused whole */
    assert_int_equal(tb.len, 7);
    assert_memory_equal(buf, "0123456\0X", 9);
}

static void test_capacity_one_holds_only_the_nul(void **state)
{
    (void)state;
    char buf[2] = "XX";
    struct textbuf tb;
    textbuf_init(&tb, buf, 1);
    assert_int_equal(textbuf_room(&tb), 0);
    assert_int_equal(textbuf_append(&tb, "ab", 2), 2);
    assert_memory_equal(buf, "\0X", 2);
}

static void test_zero_capacity_touches_nothing(void **state)
{
    (void)state;
    struct textbuf tb;
    textbuf_init(&tb, NULL, 0); /* no buffer at all: a counting-only buffer_sink */
    assert_int_equal(textbuf_room(&tb), 0);
    assert_int_equal(textbuf_append(&tb, "abc", 3), 3);
    assert_int_equal(tb.len, 0);
}

static void test_hex_lower(void **state)
{
    (void)state;
    const char *want = "0123456789abcdef";
    for (unsigned v = 0; v < 16; v++)
        assert_int_equal(hex_lower(v), want[v]);
    assert_int_equal(hex_lower(0x1f), 'f'); /* only the low four bits count */
    assert_int_equal(hex_lower(0xa0), '0');
}

UNIT_MAIN(NULL, NULL,
          test_appends_that_fit, test_append_cut_at_the_end_reports_the_rest, test_capacity_one_holds_only_the_nul,
          test_zero_capacity_touches_nothing, test_hex_lower)
