/* tests/unit/test_sink.c: kernel/lib/sink.c's buffer sink (appends, counts what did not fit, at any capacity) and
 * its line_sink -- a line printed in pieces reaches the target in one write, several lines in one write arrive
 * one write each, a line longer than the buffer goes on in full
 * pieces, and flush hands on an unfinished line (and nothing when there is none). The target records every
 * write it is given, separately, so a line split across two writes shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "unit_main.h"

#define MAX_WRITES 16

struct recording_sink {
    struct sink sink;
    unsigned writes;
    size_t len[MAX_WRITES];
    char text[MAX_WRITES][2 * LINE_SINK_MAX];
};

static void record_write(struct sink *sink, const char *text, size_t len)
{
    struct recording_sink *r = (struct recording_sink *)sink;
    assert_true(r->writes < MAX_WRITES);
    assert_true(len > 0 && len < sizeof r->text[0]);
    memcpy(r->text[r->writes], text, len);
    r->text[r->writes][len] = 0;
    r->len[r->writes++] = len;
}

static struct recording_sink target;
static struct line_sink lines;

static int setup(void **state)
{
    (void)state;
    memset(&target, 0, sizeof target);
    target.sink.write = record_write;
    target.sink.flush = 0;
    line_sink_init(&lines, &target.sink);
    return 0;
}

static void test_line_in_pieces_is_one_write(void **state)
{
    (void)state;
    sink_printf(&lines.sink, "udpsh: port %u, %u requests", 5555u, 3u);
    assert_int_equal(target.writes, 0); /* nothing until the line is whole */
    sink_puts(&lines.sink, ", no rate limit\n");
    assert_int_equal(target.writes, 1);
    assert_string_equal(target.text[0], "udpsh: port 5555, 3 requests, no rate limit\n");
}

static void test_lines_in_one_write_are_one_write_each(void **state)
{
    (void)state;
    sink_puts(&lines.sink, "one\ntwo\n\nthree");
    assert_int_equal(target.writes, 3);
    assert_string_equal(target.text[0], "one\n");
    assert_string_equal(target.text[1], "two\n");
    assert_string_equal(target.text[2], "\n");
    line_sink_flush(&lines);
    assert_int_equal(target.writes, 4);
    assert_string_equal(target.text[3], "three");
}

static void test_flush_with_nothing_held_writes_nothing(void **state)
{
    (void)state;
    line_sink_flush(&lines);
    sink_puts(&lines.sink, "whole\n");
    line_sink_flush(&lines);
    assert_int_equal(target.writes, 1);
    assert_string_equal(target.text[0], "whole\n");
}

static void test_long_line_goes_on_in_full_pieces(void **state)
{
    (void)state;
    char longline[LINE_SINK_MAX + 11];
    for (size_t i = 0; i < sizeof longline - 1; i++)
        longline[i] = (char)('a' + i % 26);
    longline[sizeof longline - 2] = '\n';
    longline[sizeof longline - 1] = 0;
    sink_puts(&lines.sink, longline);
    assert_int_equal(target.writes, 2);
    assert_int_equal(target.len[0], LINE_SINK_MAX);
    assert_memory_equal(target.text[0], longline, LINE_SINK_MAX);
    assert_string_equal(target.text[1], longline + LINE_SINK_MAX);
}

static void test_line_exactly_the_buffer_is_one_write(void **state)
{
    (void)state;
    char exact[LINE_SINK_MAX + 1];
    memset(exact, 'x', LINE_SINK_MAX - 1);
    exact[LINE_SINK_MAX - 1] = '\n';
    exact[LINE_SINK_MAX] = 0;
    sink_puts(&lines.sink, exact);
    assert_int_equal(target.writes, 1);
    assert_int_equal(target.len[0], LINE_SINK_MAX);
    assert_string_equal(target.text[0], exact);
    line_sink_flush(&lines);
    assert_int_equal(target.writes, 1);
}

static void test_buffer_sink_appends_and_counts_truncation(void **state)
{
    (void)state;
    char buf[8];
    memset(buf, 'X', sizeof buf);
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, sizeof buf);
    assert_string_equal(buf, "");
    assert_int_equal(bs.len, 0);
    assert_int_equal(bs.truncated, 0);

    sink_puts(&bs.sink, "abc");
    assert_string_equal(buf, "abc");
    sink_printf(&bs.sink, "%d", 12);
    assert_string_equal(buf, "abc12");
    assert_int_equal(bs.len, 5);
    assert_int_equal(bs.truncated, 0);

    sink_puts(&bs.sink, "wxyz");
    assert_string_equal(buf, "abc12wx");
    assert_int_equal(bs.len, 7);
    assert_int_equal(bs.truncated, 2);

    sink_printf(&bs.sink, "%s", "more");
    assert_string_equal(buf, "abc12wx");
    assert_int_equal(bs.len, 7);
    assert_int_equal(bs.truncated, 6);
}

static void test_buffer_sink_tiny_capacities(void **state)
{
    (void)state;
    struct buffer_sink bs;
    buffer_sink_init(&bs, NULL, 0);
    sink_puts(&bs.sink, "abc");
    assert_int_equal(bs.len, 0);
    assert_int_equal(bs.truncated, 3);

    char one[1] = { 'X' };
    buffer_sink_init(&bs, one, 1);
    sink_printf(&bs.sink, "%d", 1234);
    assert_int_equal(one[0], '\0');
    assert_int_equal(bs.len, 0);
    assert_int_equal(bs.truncated, 4);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_line_in_pieces_is_one_write, test_lines_in_one_write_are_one_write_each,
               test_flush_with_nothing_held_writes_nothing, test_long_line_goes_on_in_full_pieces,
               test_line_exactly_the_buffer_is_one_write, test_buffer_sink_appends_and_counts_truncation,
               test_buffer_sink_tiny_capacities)
