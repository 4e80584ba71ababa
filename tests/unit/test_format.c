/* tests/unit/test_format.c: kernel/lib/format.c (format_v, ksnprintf) and kernel/lib/sink.c's sink_printf and
 * sink_puts (the buffer sink's tests are tests/unit/test_sink.c's) against exact expected strings, and against the
 * host printf over a grid of flags, widths, precisions and values where C defines the answer. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <cmocka.h>

#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "unit_main.h"

static char out[1024];

/* format (ksnprintf, or format_unchecked below) must produce exactly `expected` and report its length. */
#define EXPECT_FROM(format, expected, ...)                           \
    do {                                                             \
        size_t got_len_ = format(out, sizeof out, __VA_ARGS__);      \
        assert_string_equal(out, (expected));                        \
        assert_int_equal(got_len_, strlen(expected));                \
    } while (0)
#define EXPECT_FORMAT(expected, ...) EXPECT_FROM(ksnprintf, expected, __VA_ARGS__)

/* ksnprintf must agree with the host's snprintf, text and length. */
#define EXPECT_LIKE_LIBC(...)                                        \
    do {                                                             \
        char want_[sizeof out];                                      \
        int want_len_ = snprintf(want_, sizeof want_, __VA_ARGS__);  \
        size_t got_len_ = ksnprintf(out, sizeof out, __VA_ARGS__);   \
        assert_string_equal(out, want_);                             \
        assert_int_equal(got_len_, (size_t)want_len_);               \
    } while (0)

/* For formats the compiler's checker rightly rejects (unknown conversions, a trailing '%', flags C says are
 * ignored): the same call without the format attribute. */
static size_t format_unchecked(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t len = kvsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return len;
}

#define EXPECT_UNCHECKED(expected, ...) EXPECT_FROM(format_unchecked, expected, __VA_ARGS__)

/* A format of one int: the text it must give. The tables' formats are no literals for the compiler to check, so
 * they go through format_unchecked; an unsigned conversion reads the (non-negative) int as unsigned. */
struct int_case {
    const char *want, *fmt;
    int value;
};

/* Each case must give exactly its text and report its length; a failure names the case. */
static void expect_int_cases(const struct int_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = format_unchecked(out, sizeof out, cases[i].fmt, cases[i].value);
        if (strcmp(out, cases[i].want) != 0 || len != strlen(cases[i].want))
            fail_msg("\"%s\" of %d gave \"%s\" (length %zu), not \"%s\"", cases[i].fmt, cases[i].value, out, len,
                     cases[i].want);
    }
}

static void test_plain_text(void **state)
{
    (void)state;
    EXPECT_FORMAT("", "%s", "");
    EXPECT_FORMAT("hello, world", "hello, world");
    EXPECT_FORMAT("100%", "100%%");
    EXPECT_FORMAT("%d", "%%d");
    EXPECT_FORMAT("a%b", "a%%b");
}

static void test_signed_decimal(void **state)
{
    (void)state;
    EXPECT_FORMAT("0", "%d", 0);
    EXPECT_FORMAT("42", "%d", 42);
    EXPECT_FORMAT("-42", "%i", -42);
    EXPECT_FORMAT("2147483647", "%d", INT_MAX);
    EXPECT_FORMAT("-2147483648", "%d", INT_MIN);
    EXPECT_FORMAT("-9223372036854775808", "%lld", (long long)INT64_MIN);
    EXPECT_FORMAT("9223372036854775807", "%lld", (long long)INT64_MAX);
    EXPECT_FORMAT("-9223372036854775808", "%ld", LONG_MIN);
    EXPECT_FORMAT("-9223372036854775808", "%jd", INTMAX_MIN);
    EXPECT_FORMAT("[-9223372036854775808]", "[%5lld]", (long long)INT64_MIN);
    EXPECT_FORMAT("-0000009223372036854775808", "%.25lld", (long long)INT64_MIN);
    EXPECT_FORMAT("-000009223372036854775808", "%025lld", (long long)INT64_MIN);
    EXPECT_FORMAT("1 -2 3", "%d %d %d", 1, -2, 3);
}

static void test_unsigned_and_bases(void **state)
{
    (void)state;
    EXPECT_FORMAT("4294967295", "%u", UINT_MAX);
    EXPECT_FORMAT("18446744073709551615", "%llu", (unsigned long long)UINT64_MAX);
    EXPECT_FORMAT("ffffffffffffffff", "%llx", (unsigned long long)UINT64_MAX);
    EXPECT_FORMAT("FFFFFFFFFFFFFFFF", "%llX", (unsigned long long)UINT64_MAX);
    EXPECT_FORMAT("1777777777777777777777", "%llo", (unsigned long long)UINT64_MAX);
    EXPECT_FORMAT("abcdef", "%x", 0xabcdefu);
    EXPECT_FORMAT("ABCDEF", "%X", 0xabcdefu);
    EXPECT_FORMAT("17", "%o", 15u);
    EXPECT_FORMAT("0", "%x", 0u);
    EXPECT_FORMAT("ffffffff", "%x", -1);
}

static void test_width_and_flags(void **state)
{
    (void)state;
    static const struct int_case cases[] = {
        { "   42", "%5d", 42 },
        { "42   |", "%-5d|", 42 },
        { "00042", "%05d", 42 },
        { "-0042", "%05d", -42 },
        { "  -42", "%5d", -42 },
        { "+5", "%+d", 5 },
        { "-5", "%+d", -5 },
        { " 5", "% d", 5 },
        { "-5", "% d", -5 },
        { "+0005", "%+05d", 5 },
        { "42", "%1d", 42 },
        { "0xff", "%#x", 255 },
        { "0XFF", "%#X", 255 },
        { "0", "%#x", 0 },
        { "010", "%#o", 8 },
        { "0", "%#o", 0 },
        { "0x000000ff", "%#010x", 255 },
        { "      0xff", "%#10x", 255 },
        { "0xff      |", "%-#10x|", 255 },
        /* '-' wins over '0'; '+' wins over ' '; C says unsigned conversions ignore both. */
        { "-42  |", "%-05d|", -42 },
        { "+7", "%+ d", 7 },
        { "7", "%+u", 7 },
        { "7", "% u", 7 },
        { "ff", "%+x", 255 },
        /* Repeated flags are allowed. */
        { "42    |", "%--6d|", 42 },
    };
    expect_int_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_integer_precision(void **state)
{
    (void)state;
    static const struct int_case cases[] = {
        { "007", "%.3d", 7 },
        { "-007", "%.3d", -7 },
        { "12345", "%.3d", 12345 },
        { "", "%.0d", 0 },
        { "", "%.d", 0 },
        { "     ", "%5.0d", 0 },
        { "+", "%+.0d", 0 },
        { "", "%.0x", 0 },
        { "0", "%#.0o", 0 },
        { "010", "%#.3o", 8 },
        { "0x00ff", "%#.4x", 255 },
        /* A precision switches the '0' flag off. */
        { "     007", "%08.3d", 7 },
        { "-007    |", "%-8.3d|", -7 },
        { "0000000000000000000000000000000000000001", "%.40u", 1 },
    };
    expect_int_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_star_width_and_precision(void **state)
{
    (void)state;
    EXPECT_FORMAT("   42", "%*d", 5, 42);
    EXPECT_FORMAT("42   |", "%*d|", -5, 42);
    EXPECT_FORMAT("42   |", "%-*d|", 5, 42);
    EXPECT_FORMAT("0007", "%.*d", 4, 7);
    EXPECT_FORMAT("7", "%.*d", -1, 7);
    EXPECT_FORMAT("   007", "%*.*d", 6, 3, 7);
    EXPECT_FORMAT("abc", "%.*s", 3, "abcdef");
    EXPECT_FORMAT("", "%.*s", 0, "abcdef");
    EXPECT_FORMAT("abcdef", "%.*s", -1, "abcdef");
    EXPECT_FORMAT("  ab|", "%*.*s|", 4, 2, "abcdef");
    EXPECT_FORMAT("x 9", "%.*s %d", 1, "xyz", 9);
}

static void test_length_modifiers(void **state)
{
    (void)state;
    EXPECT_FORMAT("-1", "%hhd", 255);
    EXPECT_FORMAT("-128", "%hhd", 128);
    EXPECT_FORMAT("7", "%hhu", 256 + 7);
    EXPECT_FORMAT("ff", "%hhx", 0x1ff);
    EXPECT_FORMAT("-1", "%hd", 65535);
    EXPECT_FORMAT("4464", "%hu", 70000);
    EXPECT_FORMAT("2345", "%hx", 0x12345);
    EXPECT_FORMAT("-32768", "%hd", -32768);
    EXPECT_FORMAT("18446744073709551615", "%lu", ULONG_MAX);
    EXPECT_FORMAT("18446744073709551615", "%zu", SIZE_MAX);
    EXPECT_FORMAT("-3", "%zd", (ssize_t)-3);
    EXPECT_FORMAT("-9", "%td", (ptrdiff_t)-9);
    EXPECT_FORMAT("ffffffffffffffff", "%tx", (ptrdiff_t)-1);
    EXPECT_FORMAT("18446744073709551615", "%ju", UINTMAX_MAX);
    EXPECT_FORMAT("deadbeefcafe", "%jx", (uintmax_t)0xdeadbeefcafeull);
    /* A 64-bit argument after a narrow one must be fetched at its own width. */
    EXPECT_FORMAT("1 -9223372036854775808 2", "%hhd %lld %d", 1, (long long)INT64_MIN, 2);
}

static void test_characters(void **state)
{
    (void)state;
    EXPECT_FORMAT("A", "%c", 'A');
    EXPECT_FORMAT("  x", "%3c", 'x');
    EXPECT_FORMAT("x  |", "%-3c|", 'x');
    EXPECT_FORMAT("ab", "%c%c", 'a', 'b');

    /* A NUL character is output like any other and counted. */
    memset(out, 'Z', sizeof out);
    size_t len = ksnprintf(out, sizeof out, "a%cb", 0);
    assert_int_equal(len, 3);
    assert_memory_equal(out, "a\0b\0", 4);
}

static void test_strings(void **state)
{
    (void)state;
    /* gcc rejects a known-NULL %s at compile time, so these go through the unchecked path. */
    const char *nothing = NULL;
    EXPECT_FORMAT("abc", "%s", "abc");
    EXPECT_FORMAT("   ab", "%5s", "ab");
    EXPECT_FORMAT("ab   |", "%-5s|", "ab");
    EXPECT_FORMAT("ab", "%.2s", "abc");
    EXPECT_FORMAT("abc", "%.10s", "abc");
    EXPECT_FORMAT("    a", "%5.1s", "abc");
    EXPECT_FORMAT("abcdef", "%2s", "abcdef");
    EXPECT_UNCHECKED("(null)", "%s", nothing);
    EXPECT_UNCHECKED("  (null)", "%8s", nothing);
    EXPECT_UNCHECKED("(null)  |", "%-8s|", nothing);
    /* A precision applies to the "(null)" text like to any other. */
    EXPECT_UNCHECKED("(nu", "%.3s", nothing);
    /* Text pads with spaces even under '0'. */
    EXPECT_UNCHECKED("   ab", "%05s", "ab");
}

static void test_pointers(void **state)
{
    (void)state;
    EXPECT_FORMAT("0x0000000000001234", "%p", (void *)0x1234);
    EXPECT_FORMAT("0x0000000000000000", "%p", NULL);
    EXPECT_FORMAT("0xffffffffffffffff", "%p", (void *)UINTPTR_MAX);
    EXPECT_FORMAT("0xffffffff80001000", "%p", (void *)0xffffffff80001000ull);
    EXPECT_FORMAT("  0x00000000deadbeef|", "%20p|", (void *)0xdeadbeef);
    EXPECT_FORMAT("0x00000000deadbeef  |", "%-20p|", (void *)0xdeadbeef);
    EXPECT_FORMAT("0x0000000000000010", "%5p", (void *)0x10);
}

static void test_unknown_conversions_printed_as_written(void **state)
{
    (void)state;
    EXPECT_UNCHECKED("%", "%");
    EXPECT_UNCHECKED("abc%", "abc%");
    EXPECT_UNCHECKED("%-5", "%-5");
    EXPECT_UNCHECKED("x%#08.3", "x%#08.3");
    EXPECT_UNCHECKED("%ll", "%ll");
    EXPECT_UNCHECKED("%hh", "%hh");
    EXPECT_UNCHECKED("%y", "%y");
    EXPECT_UNCHECKED("[%5y]", "[%5y]");
    EXPECT_UNCHECKED("a%qb", "a%qb");
    EXPECT_UNCHECKED("%f", "%f");
    /* An unknown conversion consumes no argument, so the next one still lines up. */
    EXPECT_UNCHECKED("%y 5", "%y %d", 5);
    /* With a length modifier %c and %s would be wide; they are printed as written. */
    EXPECT_UNCHECKED("%ls 3", "%ls %d", 3);
    EXPECT_UNCHECKED("%lc", "%lc");
}

/* The format and the string live in heap blocks of exactly their size, so AddressSanitizer (in the san build)
 * reports any read past the NUL of the format or past the precision of an unterminated string. */
static void test_never_reads_past_the_end(void **state)
{
    (void)state;
    static const char *const formats[] = { "%", "abc%", "%-08.3l", "%*", "%.", "%.*", "%h" };
    static const char *const expected[] = { "%", "abc%", "%-08.3l", "%*", "%.", "%.*", "%h" };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        size_t size = strlen(formats[i]) + 1;
        char *fmt = malloc(size);
        assert_non_null(fmt);
        memcpy(fmt, formats[i], size);
        size_t len = format_unchecked(out, sizeof out, fmt, 0, 0);
        assert_string_equal(out, expected[i]);
        assert_int_equal(len, strlen(expected[i]));
        free(fmt);
    }

    char *unterminated = malloc(3);
    assert_non_null(unterminated);
    memcpy(unterminated, "xyz", 3);
    EXPECT_FORMAT("xyz", "%.3s", unterminated);
    EXPECT_FORMAT("xy", "%.*s", 2, unterminated);
    EXPECT_FORMAT("  xyz", "%5.3s", unterminated);
    free(unterminated);
}

static void test_snprintf_truncation(void **state)
{
    (void)state;
    assert_int_equal(ksnprintf(NULL, 0, "hello %d", 12345), 11);

    char small[8];
    memset(small, 'X', sizeof small);
    assert_int_equal(ksnprintf(small, 1, "hello"), 5);
    assert_int_equal(small[0], '\0');
    assert_int_equal(small[1], 'X');

    memset(small, 'X', sizeof small);
    assert_int_equal(ksnprintf(small, 4, "hello"), 5);
    assert_memory_equal(small, "hel\0XXXX", 8);

    memset(small, 'X', sizeof small);
    assert_int_equal(ksnprintf(small, 6, "hello"), 5);
    assert_memory_equal(small, "hello\0XX", 8);

    /* Padding past the end is counted, not written. */
    memset(small, 'X', sizeof small);
    assert_int_equal(ksnprintf(small, sizeof small, "%100d", 1), 100);
    assert_string_equal(small, "       ");

    size_t len = ksnprintf(out, sizeof out, "%2000d", -5);
    assert_int_equal(len, 2000);
    assert_int_equal(strlen(out), sizeof out - 1);
}

struct recording {
    char text[4096];
    size_t len;
    size_t calls;
    size_t empty_calls;
};

static void record_emit(void *arg, const char *text, size_t len)
{
    struct recording *rec = arg;
    rec->calls++;
    if (len == 0)
        rec->empty_calls++;
    assert_true(rec->len + len <= sizeof rec->text);
    memcpy(rec->text + rec->len, text, len);
    rec->len += len;
}

static size_t format_to_recording(struct recording *rec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static size_t format_to_recording(struct recording *rec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_v(record_emit, rec, fmt, ap);
    va_end(ap);
    return len;
}

static void test_format_v_streams_everything(void **state)
{
    (void)state;
    struct recording rec = { .len = 0 };
    size_t len = format_to_recording(&rec, "[%-100s][%0100d][%.100u]", "x", -1, 1u);
    assert_int_equal(len, 306);
    assert_int_equal(rec.len, 306);
    assert_int_equal(rec.empty_calls, 0);

    char expected[307];
    size_t at = 0;
    expected[at++] = '[';
    expected[at++] = 'x';
    memset(expected + at, ' ', 99);
    at += 99;
    memcpy(expected + at, "][-", 3);
    at += 3;
    memset(expected + at, '0', 98);
    at += 98;
    memcpy(expected + at, "1][", 3);
    at += 3;
    memset(expected + at, '0', 99);
    at += 99;
    memcpy(expected + at, "1]", 2);
    at += 2;
    assert_int_equal(at, 306);
    assert_memory_equal(rec.text, expected, 306);

    /* An empty format emits nothing at all. */
    struct recording empty = { .len = 0 };
    assert_int_equal(format_to_recording(&empty, "%s", ""), 0);
    assert_int_equal(empty.calls, 0);
}

/* "%<spec><conv>" (with ll before conv when ll, the value passed as a long long; else as an int) through
 * format_unchecked and through the host's snprintf: fails naming the format and value unless both give the
 * same text and length. */
static void check_like_libc(const char *spec, char conv, long long value, bool ll)
{
    char fmt[40], want[128];
    snprintf(fmt, sizeof fmt, "%%%s%s%c", spec, ll ? "ll" : "", conv);
    int want_len;
    size_t got_len;
    if (ll) {
        want_len = snprintf(want, sizeof want, fmt, value);
        got_len = format_unchecked(out, sizeof out, fmt, value);
    } else {
        want_len = snprintf(want, sizeof want, fmt, (int)value);
        got_len = format_unchecked(out, sizeof out, fmt, (int)value);
    }
    if (strcmp(out, want) != 0 || got_len != (size_t)want_len)
        fail_msg("format \"%s\" value %lld: got \"%s\", libc \"%s\"", fmt, value, out, want);
}

/* Every combination of flags, width, precision and conversion that C defines, for a spread of values, must
 * match the host's printf. */
static void test_matches_libc_grid(void **state)
{
    (void)state;
    static const char *const flags[] = { "", "-", "0", "+", " ", "#", "-+", "0+", "#0", "- ", "-#0+ " };
    static const char *const widths[] = { "", "1", "8", "25" };
    static const char *const precisions[] = { "", ".", ".0", ".1", ".5", ".22" };
    static const char conversions[] = { 'd', 'i', 'u', 'x', 'X', 'o' };
    static const int int_values[] = { 0, 1, -1, 7, 42, -42, 255, 4096, INT_MAX, INT_MIN };
    static const long long ll_values[] = { 0, 1, -1, 1234567890123ll, -1234567890123ll, LLONG_MAX, LLONG_MIN };

    char spec[32];
    size_t checked = 0;
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++)
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            for (size_t p = 0; p < sizeof precisions / sizeof precisions[0]; p++)
                for (size_t c = 0; c < sizeof conversions; c++) {
                    snprintf(spec, sizeof spec, "%s%s%s", flags[f], widths[w], precisions[p]);
                    for (size_t v = 0; v < sizeof int_values / sizeof int_values[0]; v++, checked++)
                        check_like_libc(spec, conversions[c], int_values[v], false);
                    for (size_t v = 0; v < sizeof ll_values / sizeof ll_values[0]; v++, checked++)
                        check_like_libc(spec, conversions[c], ll_values[v], true);
                }
    assert_int_equal(checked, 11 * 4 * 6 * 6 * (10 + 7));
}

static void test_matches_libc_misc(void **state)
{
    (void)state;
    EXPECT_LIKE_LIBC("%s=%d (%x) [%-6s] [%6.2s]", "key", -17, 0x2au, "ab", "xyz");
    EXPECT_LIKE_LIBC("%hhd %hhu %hd %hu", 300, 300, 70000, 70000);
    EXPECT_LIKE_LIBC("%zu %zx %td %jd %ju", (size_t)12345, (size_t)0xabc, (ptrdiff_t)-77, INTMAX_MIN, UINTMAX_MAX);
    EXPECT_LIKE_LIBC("%*d|%-*d|%.*d", 6, -3, 6, -3, 4, -3);
    EXPECT_LIKE_LIBC("%c%5c%-5c|", 'a', 'b', 'c');
    EXPECT_LIKE_LIBC("%.0s|%.1s|%10.4s|", "abc", "abc", "abcdefgh");
}

/* ---- sinks ------------------------------------------------------------------------------------------------ */

struct recording_sink {
    struct sink sink;
    char text[8192];
    size_t len;
    size_t writes;
    size_t longest_write;
};

static void recording_sink_write(struct sink *sink, const char *text, size_t len)
{
    struct recording_sink *rs = (struct recording_sink *)sink;
    assert_true(rs->len + len <= sizeof rs->text);
    memcpy(rs->text + rs->len, text, len);
    rs->len += len;
    rs->writes++;
    if (len > rs->longest_write)
        rs->longest_write = len;
}

static struct recording_sink *new_recording_sink(void)
{
    struct recording_sink *rs = calloc(1, sizeof *rs);
    assert_non_null(rs);
    rs->sink.write = recording_sink_write;
    rs->sink.flush = 0;
    return rs;
}

static void test_sink_printf_short_output_is_one_write(void **state)
{
    (void)state;
    struct recording_sink *rs = new_recording_sink();
    sink_printf(&rs->sink, "cpu%u: %s %5d%%\n", 3u, "busy", 97);
    assert_int_equal(rs->writes, 1);
    assert_int_equal(rs->len, strlen("cpu3: busy    97%\n"));
    assert_memory_equal(rs->text, "cpu3: busy    97%\n", rs->len);

    /* Nothing to print means no write at all. */
    rs->writes = 0;
    sink_printf(&rs->sink, "%s", "");
    assert_int_equal(rs->writes, 0);
    free(rs);
}

static void test_sink_printf_long_output_is_never_truncated(void **state)
{
    (void)state;
    struct recording_sink *rs = new_recording_sink();
    char long_text[3001];
    for (size_t i = 0; i < 3000; i++)
        long_text[i] = (char)('a' + i % 26);
    long_text[3000] = '\0';

    sink_printf(&rs->sink, "<%s>%300d|", long_text, 7);
    assert_int_equal(rs->len, 1 + 3000 + 1 + 300 + 1);
    assert_int_equal(rs->text[0], '<');
    assert_memory_equal(rs->text + 1, long_text, 3000);
    assert_int_equal(rs->text[3001], '>');
    for (size_t i = 0; i < 299; i++)
        assert_int_equal(rs->text[3002 + i], ' ');
    assert_memory_equal(rs->text + 3301, "7|", 2);
    /* Streamed through the stack buffer: bounded pieces, and not one write per character. */
    assert_true(rs->longest_write <= 128);
    assert_true(rs->writes >= rs->len / 128);
    assert_true(rs->writes <= rs->len / 128 + 2);
    free(rs);
}

/* The one dotted-quad writer: every octet in its place, the extremes at full width, no leading zeros. */
static void test_ipv4_text(void **state)
{
    (void)state;
    assert_string_equal(ipv4_text(0x0a00020f).s, "10.0.2.15");
    assert_string_equal(ipv4_text(0).s, "0.0.0.0");
    assert_string_equal(ipv4_text(0xffffffffu).s, "255.255.255.255");
    assert_string_equal(ipv4_text(0x7f000001).s, "127.0.0.1");
    assert_string_equal(ipv4_text(0x01020304).s, "1.2.3.4");
    char line[64];
    ksnprintf(line, sizeof line, "%s:%u", ipv4_text(0xc0a80107).s, 5555u);
    assert_string_equal(line, "192.168.1.7:5555");
}

static void test_sink_puts(void **state)
{
    (void)state;
    struct recording_sink *rs = new_recording_sink();
    sink_puts(&rs->sink, "hello\n");
    sink_puts(&rs->sink, "");
    assert_int_equal(rs->writes, 1);
    assert_int_equal(rs->len, 6);
    assert_memory_equal(rs->text, "hello\n", 6);
    free(rs);
}

UNIT_MAIN(NULL, NULL,
          test_plain_text, test_signed_decimal, test_unsigned_and_bases, test_width_and_flags, test_integer_precision,
          test_star_width_and_precision, test_length_modifiers, test_characters, test_strings, test_pointers,
          test_unknown_conversions_printed_as_written, test_never_reads_past_the_end, test_snprintf_truncation,
          test_format_v_streams_everything, test_matches_libc_grid, test_matches_libc_misc,
          test_sink_printf_short_output_is_one_write, test_sink_printf_long_output_is_never_truncated, test_ipv4_text,
          test_sink_puts)
