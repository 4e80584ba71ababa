/* tests/unit/test_udpsh_proto.c: kernel/udpsh/wire.c -- the reply chunker's datagram boundaries (full
 * 1400-byte datagrams, cuts at the last newline, lines longer than a datagram, byte-at-a-time writes), the
 * trailer's exact text and counts, the sink adapter, request checking and the CRC-32 the trailer carries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/udpsh/wire.h"
#include "kernel/lib/sink.h"

#define MAX_DATAGRAMS 64

/* Every datagram the chunker emitted, in order. */
struct capture {
    int count;
    size_t len[MAX_DATAGRAMS];
    char data[MAX_DATAGRAMS][UDPSH_DATAGRAM_MAX + UDPSH_TRAILER_MAX];
};

static void capture_emit(void *arg, const char *data, size_t len)
{
    struct capture *cap = arg;
    assert_true(cap->count < MAX_DATAGRAMS);
    assert_true(len <= sizeof cap->data[0]);
    memcpy(cap->data[cap->count], data, len);
    cap->len[cap->count] = len;
    cap->count++;
}

static struct capture cap;
static struct reply_chunker chunker;

static int setup(void **state)
{
    (void)state;
    memset(&cap, 0, sizeof cap);
    chunker_init(&chunker, 7, capture_emit, &cap);
    return 0;
}

/* Datagram i as a NUL-terminated string (the tests write no NUL bytes). */
static const char *datagram(int i)
{
    static char text[sizeof cap.data[0] + 1];
    assert_true(i < cap.count);
    memcpy(text, cap.data[i], cap.len[i]);
    text[cap.len[i]] = '\0';
    return text;
}

static const char *trailer(void)
{
    assert_true(cap.count > 0);
    return datagram(cap.count - 1);
}

/* The text datagrams (all but the trailer) joined must be exactly what was written. */
static void expect_text(const char *expected, size_t len)
{
    size_t at = 0;
    for (int i = 0; i + 1 < cap.count; i++) {
        assert_true(cap.len[i] > 0);
        assert_true(cap.len[i] <= UDPSH_DATAGRAM_MAX);
        assert_true(at + cap.len[i] <= len);
        assert_memory_equal(cap.data[i], expected + at, cap.len[i]);
        at += cap.len[i];
    }
    assert_int_equal(at, len);
}

/* n bytes of lines, each line_len long including its newline (the last may be cut short). */
static char *make_lines(size_t n, size_t line_len)
{
    char *text = malloc(n + 1);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        text[i] = (i % line_len == line_len - 1) ? '\n' : (char)('a' + i % 26);
    text[n] = '\0';
    return text;
}

/* The chunker is given len bytes of text in one write and finished with status: it must have sent count
 * datagrams, the trailer included. */
static void write_and_finish(const char *text, size_t len, int status, int count)
{
    chunker_write(&chunker, text, len);
    chunker_finish(&chunker, status);
    assert_int_equal(cap.count, count);
}

static void test_empty_output_is_only_the_trailer(void **state)
{
    (void)state;
    chunker_finish(&chunker, 0);
    assert_int_equal(cap.count, 1);
    assert_string_equal(trailer(), "# udpsh end seq=7 datagrams=0 bytes=0 crc32=00000000 status=0\n");
}

static void test_short_reply_and_trailer(void **state)
{
    (void)state;
    write_and_finish("hello\n", 6, 0, 2);
    assert_string_equal(datagram(0), "hello\n");
    /* crc32 as zlib.crc32(b"hello\n") */
    assert_string_equal(trailer(), "# udpsh end seq=7 datagrams=1 bytes=6 crc32=363a3020 status=0\n");
}

static void test_trailer_on_its_own_line_when_text_lacks_newline(void **state)
{
    (void)state;
    write_and_finish("hello", 5, 0, 2);
    assert_string_equal(datagram(0), "hello");
    /* The leading newline belongs to the trailer: bytes still counts 5. */
    assert_string_equal(trailer(), "\n# udpsh end seq=7 datagrams=1 bytes=5 crc32=3610a686 status=0\n");
}

static void test_status_is_zero_or_one(void **state)
{
    (void)state;
    int results[] = {1, -1, 2, 127};
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
        setup(NULL);
        write_and_finish("usage: x\n", 9, results[i], 2);
        assert_non_null(strstr(trailer(), " status=1\n"));
    }
}

static void test_exactly_one_full_datagram(void **state)
{
    (void)state;
    char *text = make_lines(UDPSH_DATAGRAM_MAX, 100);
    chunker_write(&chunker, text, UDPSH_DATAGRAM_MAX);
    /* A full buffer is held until the next write or the finish. */
    assert_int_equal(cap.count, 0);
    chunker_finish(&chunker, 0);
    assert_int_equal(cap.count, 2);
    assert_int_equal(cap.len[0], UDPSH_DATAGRAM_MAX);
    expect_text(text, UDPSH_DATAGRAM_MAX);
    char want[UDPSH_TRAILER_MAX];
    snprintf(want, sizeof want, "# udpsh end seq=7 datagrams=1 bytes=1400 crc32=%08x status=0\n",
             udpsh_crc32(0, text, UDPSH_DATAGRAM_MAX));
    assert_string_equal(trailer(), want);
    free(text);
}

static void test_one_byte_over_a_full_datagram(void **state)
{
    (void)state;
    char *text = make_lines(UDPSH_DATAGRAM_MAX + 1, 100);
    text[UDPSH_DATAGRAM_MAX] = 'z';
    write_and_finish(text, UDPSH_DATAGRAM_MAX + 1, 0, 3);
    assert_int_equal(cap.len[0], UDPSH_DATAGRAM_MAX);
    assert_int_equal(cap.len[1], 1);
    assert_string_equal(datagram(1), "z");
    expect_text(text, UDPSH_DATAGRAM_MAX + 1);
    assert_non_null(strstr(trailer(), "\n# udpsh end seq=7 datagrams=2 bytes=1401 "));
    assert_int_equal(trailer()[0], '\n');
    free(text);
}

static void test_cuts_at_the_last_newline(void **state)
{
    (void)state;
    /* 30-byte lines: 46 of them (1380 bytes) fit in a datagram, the 47th does not. */
    size_t n = 3000;
    char *text = make_lines(n, 30);
    write_and_finish(text, n, 0, 4);
    assert_int_equal(cap.len[0], 1380);
    assert_int_equal(cap.len[1], 1380);
    assert_int_equal(cap.len[2], 240);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cap.data[i][cap.len[i] - 1], '\n');
    expect_text(text, n);
    assert_non_null(strstr(trailer(), "# udpsh end seq=7 datagrams=3 bytes=3000 "));
    free(text);
}

static void test_newline_as_the_last_byte_that_fits(void **state)
{
    (void)state;
    /* A 1400-byte line (its newline at offset 1399) followed by more: the first datagram is that line whole. */
    char text[UDPSH_DATAGRAM_MAX + 4];
    memset(text, 'q', sizeof text);
    text[UDPSH_DATAGRAM_MAX - 1] = '\n';
    memcpy(text + UDPSH_DATAGRAM_MAX, "ok\n", 3);
    write_and_finish(text, UDPSH_DATAGRAM_MAX + 3, 0, 3);
    assert_int_equal(cap.len[0], UDPSH_DATAGRAM_MAX);
    assert_string_equal(datagram(1), "ok\n");
    expect_text(text, UDPSH_DATAGRAM_MAX + 3);
}

static void test_line_longer_than_a_datagram(void **state)
{
    (void)state;
    /* "short\n", then one 2000-byte line: "short\n" goes alone (the cut prefers the newline), the long line is
     * cut hard at 1400 bytes, and its end and newline follow. */
    size_t n = 6 + 2000 + 1;
    char *text = malloc(n);
    assert_non_null(text);
    memcpy(text, "short\n", 6);
    memset(text + 6, 'x', 2000);
    text[n - 1] = '\n';
    write_and_finish(text, n, 0, 4);
    assert_int_equal(cap.len[0], 6);
    assert_int_equal(cap.len[1], UDPSH_DATAGRAM_MAX);
    assert_int_equal(cap.len[2], 601);
    expect_text(text, n);
    assert_non_null(strstr(trailer(), "# udpsh end seq=7 datagrams=3 bytes=2007 "));
    free(text);
}

static void test_line_longer_than_a_datagram_without_newline(void **state)
{
    (void)state;
    size_t n = 2 * UDPSH_DATAGRAM_MAX + 5;
    char *text = malloc(n);
    assert_non_null(text);
    memset(text, 'y', n);
    write_and_finish(text, n, 1, 4);
    assert_int_equal(cap.len[0], UDPSH_DATAGRAM_MAX);
    assert_int_equal(cap.len[1], UDPSH_DATAGRAM_MAX);
    assert_int_equal(cap.len[2], 5);
    expect_text(text, n);
    char want[UDPSH_TRAILER_MAX];
    snprintf(want, sizeof want, "\n# udpsh end seq=7 datagrams=3 bytes=2805 crc32=%08x status=1\n",
             udpsh_crc32(0, text, n));
    assert_string_equal(trailer(), want);
    free(text);
}

static void test_small_writes_cut_like_one_write(void **state)
{
    (void)state;
    /* Lines of varied lengths, some longer than a datagram, written a byte at a time and then in one go. */
    size_t n = 0;
    static char text[9000];
    for (size_t line = 0; n < sizeof text - 1800; line++) {
        size_t len = (line * 337) % 1700 + 1;
        memset(text + n, (int)('a' + line % 26), len);
        n += len;
        text[n++] = '\n';
    }
    chunker_write(&chunker, "", 0);
    for (size_t i = 0; i < n; i++)
        chunker_write(&chunker, text + i, 1);
    chunker_finish(&chunker, 0);
    static struct capture bytewise;
    bytewise = cap;

    setup(NULL);
    chunker_write(&chunker, text, n);
    chunker_finish(&chunker, 0);
    assert_int_equal(cap.count, bytewise.count);
    for (int i = 0; i < cap.count; i++) {
        assert_int_equal(cap.len[i], bytewise.len[i]);
        assert_memory_equal(cap.data[i], bytewise.data[i], cap.len[i]);
    }
    expect_text(text, n);
    /* Every datagram but the last text one ends a line, or is a full cut of a long line. */
    for (int i = 0; i + 2 < cap.count; i++)
        assert_true(cap.data[i][cap.len[i] - 1] == '\n' || cap.len[i] == UDPSH_DATAGRAM_MAX);
}

static void test_sink_adapter(void **state)
{
    (void)state;
    struct sink *out = chunker_sink(&chunker);
    sink_printf(out, "%-6s %d\n", "cpus", 4);
    sink_puts(out, "done\n");
    chunker_finish(&chunker, 0);
    assert_int_equal(cap.count, 2);
    assert_string_equal(datagram(0), "cpus   4\ndone\n");
    assert_non_null(strstr(trailer(), " datagrams=1 bytes=14 "));
}

/* A flush sends what is held as a datagram of its own (`profile top`: a frame each), through a line sink as the
 * shell wraps the chunker; a flush with nothing held, or after the finish, sends nothing. */
static void test_flush_ends_a_datagram(void **state)
{
    (void)state;
    struct line_sink lines;
    line_sink_init(&lines, chunker_sink(&chunker));
    sink_puts(&lines.sink, "top 1/2\nrow a\n");
    sink_flush(&lines.sink);
    sink_flush(&lines.sink);
    sink_puts(&lines.sink, "top 2/2\nrow");
    sink_flush(&lines.sink); /* the unfinished line too */
    chunker_finish(&chunker, 0);
    sink_flush(chunker_sink(&chunker));
    assert_int_equal(cap.count, 3);
    assert_string_equal(datagram(0), "top 1/2\nrow a\n");
    assert_string_equal(datagram(1), "top 2/2\nrow");
    assert_non_null(strstr(trailer(), "\n# udpsh end seq=7 datagrams=2 bytes=25 "));
}

static void test_writes_after_finish_are_dropped(void **state)
{
    (void)state;
    chunker_write(&chunker, "a\n", 2);
    chunker_finish(&chunker, 0);
    write_and_finish("late\n", 5, 1, 2);
    assert_int_equal(chunker.late_bytes, 5);
    assert_non_null(strstr(trailer(), " status=0\n"));
}

static void test_largest_trailer_fits(void **state)
{
    (void)state;
    chunker_init(&chunker, UINT64_MAX, capture_emit, &cap);
    chunker.datagrams = UINT64_MAX;
    chunker.bytes = UINT64_MAX;
    chunker.crc = 0xffffffffu;
    chunker_finish(&chunker, 1);
    assert_int_equal(cap.count, 1);
    assert_string_equal(trailer(), "\n# udpsh end seq=18446744073709551615 datagrams=18446744073709551615 "
                                   "bytes=18446744073709551615 crc32=ffffffff status=1\n");
    assert_true(cap.len[0] < UDPSH_TRAILER_MAX);
}

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(udpsh_crc32(0, "", 0), 0);
    assert_int_equal(udpsh_crc32(0, "123456789", 9), 0xcbf43926u);
    assert_int_equal(udpsh_crc32(0, "hello\n", 6), 0x363a3020u);
    uint32_t crc = udpsh_crc32(0, "1234", 4);
    crc = udpsh_crc32(crc, "", 0);
    crc = udpsh_crc32(crc, "56789", 5);
    assert_int_equal(crc, 0xcbf43926u);
}

static void expect_line(const char *request, size_t len, const char *want)
{
    char line[UDPSH_LINE_MAX + 1];
    memset(line, '#', sizeof line);
    assert_null(udpsh_request_line(request, len, line));
    assert_string_equal(line, want);
}

static void expect_refusal(const void *request, size_t len, const char *want)
{
    char line[UDPSH_LINE_MAX + 1];
    assert_string_equal(udpsh_request_line(request, len, line), want);
}

static void test_request_lines(void **state)
{
    (void)state;
    expect_line("help", 4, "help");
    expect_line("help\n", 5, "help");
    expect_line("help\r\n", 6, "help");
    expect_line("profile\t500 all 3\n", 18, "profile\t500 all 3");
    expect_line("", 0, "");
    expect_line("\n", 1, "");
    expect_line("\r\n", 2, "");
    expect_line("  ps  ", 6, "  ps  ");
}

static void test_request_length_limit(void **state)
{
    (void)state;
    char request[UDPSH_LINE_MAX + 3];
    memset(request, 'a', sizeof request);
    char want[UDPSH_LINE_MAX + 1];
    memset(want, 'a', UDPSH_LINE_MAX);
    want[UDPSH_LINE_MAX] = '\0';
    expect_line(request, UDPSH_LINE_MAX, want);
    request[UDPSH_LINE_MAX] = '\n';
    expect_line(request, UDPSH_LINE_MAX + 1, want);
    request[UDPSH_LINE_MAX] = 'a';
    expect_refusal(request, UDPSH_LINE_MAX + 1, UDPSH_REPLY_TOO_LONG);

    /* The largest UDP payload, all zero bytes: refused for its length before anything is read. */
    size_t big = 65507;
    char *huge = calloc(1, big);
    assert_non_null(huge);
    expect_refusal(huge, big, UDPSH_REPLY_TOO_LONG);
    free(huge);
}

static void test_request_refuses_non_text(void **state)
{
    (void)state;
    expect_refusal("he\0lp", 5, UDPSH_REPLY_NOT_TEXT);
    expect_refusal("\x01", 1, UDPSH_REPLY_NOT_TEXT);
    expect_refusal("ps\x1b[A", 5, UDPSH_REPLY_NOT_TEXT);
    expect_refusal("caf\xc3\xa9", 5, UDPSH_REPLY_NOT_TEXT);
    expect_refusal("\x7f", 1, UDPSH_REPLY_NOT_TEXT);
    expect_refusal("\xff\xfe\n", 3, UDPSH_REPLY_NOT_TEXT);
    /* Binary garbage with a newline inside: non-text wins, whatever the order. */
    expect_refusal("a\nb\x02", 4, UDPSH_REPLY_NOT_TEXT);
}

static void test_request_refuses_more_than_one_line(void **state)
{
    (void)state;
    expect_refusal("help\nps\n", 8, UDPSH_REPLY_MULTILINE);
    expect_refusal("help\n\n", 6, UDPSH_REPLY_MULTILINE);
    expect_refusal("help\r", 5, UDPSH_REPLY_MULTILINE);
    expect_refusal("\rhelp", 5, UDPSH_REPLY_MULTILINE);
}

static void test_refusals_are_single_marked_lines(void **state)
{
    (void)state;
    const char *replies[] = {udpsh_busy_reply(), UDPSH_REPLY_TOO_LONG, UDPSH_REPLY_NOT_TEXT, UDPSH_REPLY_MULTILINE};
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        const char *r = replies[i];
        size_t len = strlen(r);
        assert_true(strncmp(r, "# udpsh busy", 12) == 0 || strncmp(r, "# udpsh error: ", 15) == 0);
        assert_int_equal(r[len - 1], '\n');
        assert_ptr_equal(strchr(r, '\n'), r + len - 1);
        assert_true(len < UDPSH_DATAGRAM_MAX);
    }
    assert_string_equal(udpsh_busy_reply(), "# udpsh busy: another command is running\n");
    assert_string_equal(UDPSH_REPLY_TOO_LONG, "# udpsh error: line too long (max 255 characters)\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_empty_output_is_only_the_trailer, setup),
        cmocka_unit_test_setup(test_short_reply_and_trailer, setup),
        cmocka_unit_test_setup(test_trailer_on_its_own_line_when_text_lacks_newline, setup),
        cmocka_unit_test_setup(test_status_is_zero_or_one, setup),
        cmocka_unit_test_setup(test_exactly_one_full_datagram, setup),
        cmocka_unit_test_setup(test_one_byte_over_a_full_datagram, setup),
        cmocka_unit_test_setup(test_cuts_at_the_last_newline, setup),
        cmocka_unit_test_setup(test_newline_as_the_last_byte_that_fits, setup),
        cmocka_unit_test_setup(test_line_longer_than_a_datagram, setup),
        cmocka_unit_test_setup(test_line_longer_than_a_datagram_without_newline, setup),
        cmocka_unit_test_setup(test_small_writes_cut_like_one_write, setup),
        cmocka_unit_test_setup(test_sink_adapter, setup),
        cmocka_unit_test_setup(test_flush_ends_a_datagram, setup),
        cmocka_unit_test_setup(test_writes_after_finish_are_dropped, setup),
        cmocka_unit_test_setup(test_largest_trailer_fits, setup),
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_request_lines),
        cmocka_unit_test(test_request_length_limit),
        cmocka_unit_test(test_request_refuses_non_text),
        cmocka_unit_test(test_request_refuses_more_than_one_line),
        cmocka_unit_test(test_refusals_are_single_marked_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
