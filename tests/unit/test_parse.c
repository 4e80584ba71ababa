/* tests/unit/test_parse.c: kernel/lib/parse.c -- split_words on spaces and tabs and its argument limit, and the
 * strict number parsers accepting exactly the forms parse.h promises and refusing every other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/parse.h"
#include "unit_main.h"

#define UNTOUCHED 0xdeadbeefcafef00dull

/* Splits a copy of text with room for SHELL_MAX_ARGS words: it must give exactly the words of want, in place
 * (each a pointer into the copy). */
static void expect_split(const char *text, const char *const *want, int count)
{
    char line[64];
    assert_true(strlen(text) < sizeof line);
    strcpy(line, text);
    char *argv[SHELL_MAX_ARGS];
    int n = split_words(line, argv, SHELL_MAX_ARGS);
    if (n != count)
        fail_msg("\"%s\": %d words, expected %d", text, n, count);
    for (int i = 0; i < count; i++) {
        if (argv[i] < line || argv[i] >= line + sizeof line)
            fail_msg("\"%s\": word %d is not in the line", text, i);
        if (strcmp(argv[i], want[i]) != 0)
            fail_msg("\"%s\": word %d is \"%s\", expected \"%s\"", text, i, argv[i], want[i]);
    }
}

#define EXPECT_SPLIT(text, ...)                                                                                 \
    do {                                                                                                       \
        static const char *const want_[] = { __VA_ARGS__ };                                                    \
        expect_split((text), want_, (int)(sizeof want_ / sizeof want_[0]));                                    \
    } while (0)

static void test_split_simple_words(void **state)
{
    (void)state;
    EXPECT_SPLIT("profile 100 all", "profile", "100", "all");
}

static void test_split_spaces_and_tabs_anywhere(void **state)
{
    (void)state;
    char line[] = " \t ps\t\t  all  \t";
    char *argv[SHELL_MAX_ARGS];
    assert_int_equal(split_words(line, argv, SHELL_MAX_ARGS), 2);
    assert_string_equal(argv[0], "ps");
    assert_string_equal(argv[1], "all");
    /* Words are split in place. */
    assert_ptr_equal(argv[0], line + 3);
}

static void test_split_empty_and_blank_lines(void **state)
{
    (void)state;
    char *argv[SHELL_MAX_ARGS];
    char empty[] = "";
    assert_int_equal(split_words(empty, argv, SHELL_MAX_ARGS), 0);
    char blank[] = "   \t  ";
    assert_int_equal(split_words(blank, argv, SHELL_MAX_ARGS), 0);
}

static void test_split_other_characters_are_word_characters(void **state)
{
    (void)state;
    EXPECT_SPLIT("a,b\nc -x", "a,b\nc", "-x");
}

static void test_split_exactly_max_args(void **state)
{
    (void)state;
    _Static_assert(SHELL_MAX_ARGS == 16, "the lines below hold SHELL_MAX_ARGS words");
    EXPECT_SPLIT("a b c d e f g h i j k l m n o p", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                 "n", "o", "p");
    EXPECT_SPLIT("a b c d e f g h i j k l m n o p   ", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
                 "m", "n", "o", "p");
}

static void test_split_one_more_than_max_args(void **state)
{
    (void)state;
    char line[] = "a b c d e f g h i j k l m n o p q";
    /* One slot beyond the limit is a canary: split_words must never write it. */
    char *argv[SHELL_MAX_ARGS + 1];
    char canary;
    argv[SHELL_MAX_ARGS] = &canary;
    assert_int_equal(split_words(line, argv, SHELL_MAX_ARGS), -1);
    assert_ptr_equal(argv[SHELL_MAX_ARGS], &canary);
    /* argv still holds the first max_args words. */
    assert_string_equal(argv[0], "a");
    assert_string_equal(argv[SHELL_MAX_ARGS - 1], "p");
}

static void test_split_small_limits(void **state)
{
    (void)state;
    char *argv[2];
    char two[] = "burn 5";
    assert_int_equal(split_words(two, argv, 2), 2);
    char three[] = "burn 5 extra";
    assert_int_equal(split_words(three, argv, 2), -1);
    assert_string_equal(argv[0], "burn");
    assert_string_equal(argv[1], "5");
    char one[] = "x";
    assert_int_equal(split_words(one, argv, 0), -1);
    char none[] = "  ";
    assert_int_equal(split_words(none, argv, 0), 0);
}

static void expect_u64(const char *text, uint64_t expected)
{
    uint64_t value = UNTOUCHED;
    if (!parse_u64(text, &value))
        fail_msg("parse_u64(\"%s\") refused a valid number", text);
    assert_int_equal(value, expected);
}

static void expect_refused(const char *text)
{
    uint64_t value = UNTOUCHED;
    if (parse_u64(text, &value))
        fail_msg("parse_u64(\"%s\") accepted it as %llu", text, (unsigned long long)value);
    /* A refusal leaves the output alone. */
    assert_int_equal(value, UNTOUCHED);
}

static void test_parse_decimal(void **state)
{
    (void)state;
    expect_u64("0", 0);
    expect_u64("5", 5);
    expect_u64("2000", 2000);
    expect_u64("007", 7);
    expect_u64("18446744073709551615", UINT64_MAX);
    expect_u64("18446744073709551614", UINT64_MAX - 1);
}

static void test_parse_hex(void **state)
{
    (void)state;
    expect_u64("0x0", 0);
    expect_u64("0x10", 16);
    expect_u64("0X1f", 31);
    expect_u64("0xDeadBeef", 0xdeadbeef);
    expect_u64("0xffffffffffffffff", UINT64_MAX);
    expect_u64("0x0000000000000000ffffffffffffffff", UINT64_MAX);
}

static void test_parse_refuses_malformed(void **state)
{
    (void)state;
    expect_refused("");
    expect_refused("-5");
    expect_refused("+5");
    expect_refused(" 5");
    expect_refused("5 ");
    expect_refused("12x");
    expect_refused("0x");
    expect_refused("0X");
    expect_refused("abc");
    expect_refused("1 2");
    expect_refused("0xg");
    expect_refused("0x1g");
    expect_refused("x10");
    expect_refused("1e3");
    expect_refused("0b101");
    expect_refused("1_000");
    expect_refused("\t5");
    expect_refused("5\n");
    expect_refused("ff");
    expect_refused("0x-1");
    expect_refused("00x5");

    uint64_t value = UNTOUCHED;
    assert_false(parse_u64(NULL, &value));
    assert_int_equal(value, UNTOUCHED);
}

static void test_parse_refuses_overflow(void **state)
{
    (void)state;
    expect_refused("18446744073709551616");
    expect_refused("18446744073709551620");
    expect_refused("99999999999999999999");
    expect_refused("184467440737095516150");
    expect_refused("0x10000000000000000");
    expect_refused("0x1ffffffffffffffff");
}

static void test_parse_range(void **state)
{
    (void)state;
    uint64_t value = UNTOUCHED;
    assert_true(parse_u64_range("1", 1, 2000, &value));
    assert_int_equal(value, 1);
    assert_true(parse_u64_range("2000", 1, 2000, &value));
    assert_int_equal(value, 2000);
    assert_true(parse_u64_range("0x7d0", 1, 2000, &value));
    assert_int_equal(value, 2000);

    value = UNTOUCHED;
    assert_false(parse_u64_range("0", 1, 2000, &value));
    assert_false(parse_u64_range("2001", 1, 2000, &value));
    assert_false(parse_u64_range("abc", 1, 2000, &value));
    assert_false(parse_u64_range("12x", 1, 2000, &value));
    assert_false(parse_u64_range("-1", 1, 2000, &value));
    assert_false(parse_u64_range("", 1, 2000, &value));
    assert_false(parse_u64_range("18446744073709551616", 0, UINT64_MAX, &value));
    assert_int_equal(value, UNTOUCHED);

    assert_true(parse_u64_range("18446744073709551615", 0, UINT64_MAX, &value));
    assert_int_equal(value, UINT64_MAX);
    assert_true(parse_u64_range("0", 0, 0, &value));
    assert_int_equal(value, 0);
}

/* How a command uses both: a line with an extra word is caught by the word count, not by the number parser. */
static void test_extra_words_via_split(void **state)
{
    (void)state;
    char line[] = "burn 100 200";
    char *argv[SHELL_MAX_ARGS];
    int argc = split_words(line, argv, SHELL_MAX_ARGS);
    assert_int_equal(argc, 3);
    uint64_t ms = UNTOUCHED;
    assert_true(parse_u64_range(argv[1], 1, 2000, &ms));
    assert_int_equal(ms, 100);
    assert_string_equal(argv[2], "200");

    char joined[] = "1 2";
    expect_refused(joined);
    assert_int_equal(split_words(joined, argv, SHELL_MAX_ARGS), 2);
    expect_u64(argv[0], 1);
    expect_u64(argv[1], 2);
}

static void test_parse_ipv4(void **state)
{
    (void)state;
    uint32_t a = 7;
    assert_true(parse_ipv4("10.0.2.2", &a));
    assert_int_equal(a, 0x0A000202u);
    assert_true(parse_ipv4("255.255.255.255", &a));
    assert_int_equal(a, 0xFFFFFFFFu);
    assert_true(parse_ipv4("0.0.0.0", &a));
    assert_int_equal(a, 0);
    const char *bad[] = { "", "10.0.2", "10.0.2.2.", "10.0.2.2.1", "256.0.0.1", "1.2.3.1000", "a.b.c.d",
                          "1..2.3", " 1.2.3.4", "1.2.3.4 ", "1.2.3.-4", "0x1.2.3.4", "1.2.3.4/24" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        a = 7;
        assert_false(parse_ipv4(bad[i], &a));
        assert_int_equal(a, 7); /* left untouched on failure */
    }
    assert_false(parse_ipv4(NULL, &a));
}

UNIT_MAIN(NULL, NULL,
          test_split_simple_words, test_split_spaces_and_tabs_anywhere, test_split_empty_and_blank_lines,
          test_split_other_characters_are_word_characters, test_split_exactly_max_args,
          test_split_one_more_than_max_args, test_split_small_limits, test_parse_decimal, test_parse_hex,
          test_parse_refuses_malformed, test_parse_refuses_overflow, test_parse_range, test_extra_words_via_split,
          test_parse_ipv4)
