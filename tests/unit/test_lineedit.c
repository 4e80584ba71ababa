/* tests/unit/test_lineedit.c: kernel/shell/lineedit.c -- the line each key sequence delivers, the event it returns,
 * and the exact bytes echoed (captured with a buffer_sink). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/shell/lineedit.h"
#include "kernel/lib/sink.h"

struct fixture {
    struct line_editor ed;
    struct buffer_sink echo;
    char echo_buf[16384];
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (fx == NULL)
        return -1;
    line_editor_init(&fx->ed);
    buffer_sink_init(&fx->echo, fx->echo_buf, sizeof fx->echo_buf);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

static void clear_echo(struct fixture *fx)
{
    buffer_sink_init(&fx->echo, fx->echo_buf, sizeof fx->echo_buf);
}

/* Feeds every byte of keys (length given, so NULs and high bytes can be included). Every byte but the last
 * must return LINE_NONE; the last byte's event is returned. */
static enum line_event feed_bytes(struct fixture *fx, const char *keys, size_t count)
{
    enum line_event event = LINE_NONE;
    for (size_t i = 0; i < count; i++) {
        event = line_editor_feed(&fx->ed, keys[i], &fx->echo.sink);
        if (i + 1 < count && event != LINE_NONE)
            fail_msg("byte %zu (0x%02x) of the sequence finished the line early (event %d)", i,
                     (unsigned char)keys[i], (int)event);
    }
    return event;
}

static enum line_event feed(struct fixture *fx, const char *keys)
{
    return feed_bytes(fx, keys, strlen(keys));
}

static void expect_line(struct fixture *fx, const char *line)
{
    assert_int_equal(fx->ed.len, strlen(line));
    assert_string_equal(fx->ed.buf, line);
}

static void test_printable_is_stored_and_echoed(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "ps all\r"), LINE_READY);
    expect_line(fx, "ps all");
    assert_string_equal(fx->echo_buf, "ps all\n");
}

static void test_newline_alone_is_enter(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "help\n"), LINE_READY);
    expect_line(fx, "help");
    assert_string_equal(fx->echo_buf, "help\n");
}

static void test_empty_line_is_ready_and_empty(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "\r"), LINE_READY);
    expect_line(fx, "");
    assert_string_equal(fx->echo_buf, "\n");
}

static void test_backspace_and_delete_erase_one(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "abc\b"), LINE_NONE);
    assert_string_equal(fx->echo_buf, "abc\b \b");
    assert_int_equal(feed(fx, "\x7f" "d\r"), LINE_READY);
    expect_line(fx, "ad");
    assert_string_equal(fx->echo_buf, "abc\b \b\b \bd\n");
}

static void test_backspace_on_empty_line_echoes_nothing(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "\b\x7f\b"), LINE_NONE);
    assert_string_equal(fx->echo_buf, "");
    assert_int_equal(feed(fx, "x\b\b\by\r"), LINE_READY);
    expect_line(fx, "y");
    assert_string_equal(fx->echo_buf, "x\b \by\n");
}

static void test_ctrl_u_erases_the_visible_line(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "abc\x15"), LINE_NONE);
    assert_string_equal(fx->echo_buf, "abc\b \b\b \b\b \b");
    assert_int_equal(fx->ed.len, 0);
    clear_echo(fx);
    assert_int_equal(feed(fx, "\x15" "ok\r"), LINE_READY);
    expect_line(fx, "ok");
    assert_string_equal(fx->echo_buf, "ok\n");
}

static void test_ctrl_c_cancels_and_resets(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "burn 100\x03"), LINE_CANCEL);
    assert_string_equal(fx->echo_buf, "burn 100^C\n");
    assert_int_equal(fx->ed.len, 0);
    clear_echo(fx);
    assert_int_equal(feed(fx, "ps\r"), LINE_READY);
    expect_line(fx, "ps");
    assert_string_equal(fx->echo_buf, "ps\n");
}

static void test_ctrl_c_on_empty_line(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "\x03"), LINE_CANCEL);
    assert_string_equal(fx->echo_buf, "^C\n");
}

static void test_crlf_is_one_enter(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "one\r"), LINE_READY);
    expect_line(fx, "one");
    /* The '\n' of the CRLF is swallowed: no event, no echo, and the delivered line is left alone. */
    assert_int_equal(feed(fx, "\n"), LINE_NONE);
    expect_line(fx, "one");
    assert_int_equal(feed(fx, "two\r"), LINE_READY);
    assert_int_equal(feed(fx, "\n"), LINE_NONE);
    expect_line(fx, "two");
    assert_string_equal(fx->echo_buf, "one\ntwo\n");
}

static void test_lf_lf_is_two_enters_and_cr_cr_too(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "a\n"), LINE_READY);
    assert_int_equal(feed(fx, "\n"), LINE_READY);
    expect_line(fx, "");
    /* LF then CR is also two Enters: only CR followed by LF pairs up. */
    assert_int_equal(feed(fx, "\r"), LINE_READY);
    assert_int_equal(feed(fx, "\r"), LINE_READY);
    expect_line(fx, "");
    assert_int_equal(feed(fx, "b\r"), LINE_READY);
    expect_line(fx, "b");
    assert_string_equal(fx->echo_buf, "a\n\n\n\nb\n");
}

static void test_cr_then_other_key_then_lf_is_another_enter(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "x\r"), LINE_READY);
    assert_int_equal(feed(fx, "y"), LINE_NONE);
    assert_int_equal(feed(fx, "\n"), LINE_READY);
    expect_line(fx, "y");
}

static void test_next_char_after_ready_starts_fresh(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "longer line\n"), LINE_READY);
    assert_int_equal(feed(fx, "ab\n"), LINE_READY);
    expect_line(fx, "ab");
    /* A backspace right after Enter must not erase into the delivered line. */
    assert_int_equal(feed(fx, "\bz\n"), LINE_READY);
    expect_line(fx, "z");
    assert_string_equal(fx->echo_buf, "longer line\nab\nz\n");
}

static void test_other_bytes_are_ignored(void **state)
{
    struct fixture *fx = *state;
    /* ESC [ A (cursor up) -- only the ESC is ignored; '[' and 'A' are printable. Tab, NUL, BEL, 0x80, 0xff
     * and a UTF-8 sequence are all dropped without echo. */
    static const char keys[] = "a\x1b\t\a\x80\xff\xc3\xa9" "b";
    assert_int_equal(feed_bytes(fx, keys, sizeof keys - 1), LINE_NONE);
    static const char nul_then_enter[] = { 'c', '\0', '\r' };
    assert_int_equal(feed_bytes(fx, nul_then_enter, sizeof nul_then_enter), LINE_READY);
    expect_line(fx, "abc");
    assert_string_equal(fx->echo_buf, "abc\n");
}

static void test_exactly_line_max_is_accepted(void **state)
{
    struct fixture *fx = *state;
    char line[LINE_MAX + 2];
    memset(line, 'k', LINE_MAX);
    line[LINE_MAX] = '\r';
    line[LINE_MAX + 1] = '\0';
    assert_int_equal(feed(fx, line), LINE_READY);
    assert_int_equal(fx->ed.len, LINE_MAX);
    assert_int_equal(strlen(fx->ed.buf), LINE_MAX);
    assert_int_equal(fx->echo.len, LINE_MAX + 1);
    assert_int_equal(fx->echo_buf[LINE_MAX], '\n');
}

static void test_ten_thousand_chars_refused_then_next_line_works(void **state)
{
    struct fixture *fx = *state;
    for (int i = 0; i < 10000; i++)
        assert_int_equal(line_editor_feed(&fx->ed, (char)('a' + i % 26), &fx->echo.sink), LINE_NONE);
    /* Only the first LINE_MAX characters were stored and echoed. */
    assert_int_equal(fx->ed.len, LINE_MAX);
    assert_int_equal(fx->echo.len, LINE_MAX);
    for (int i = 0; i < LINE_MAX; i++)
        assert_int_equal(fx->echo_buf[i], 'a' + i % 26);

    assert_int_equal(feed(fx, "\r"), LINE_TOO_LONG);
    assert_int_equal(feed(fx, "\n"), LINE_NONE);
    assert_int_equal(fx->echo.len, LINE_MAX + 1);
    assert_int_equal(fx->echo_buf[LINE_MAX], '\n');

    clear_echo(fx);
    assert_int_equal(feed(fx, "uptime\r"), LINE_READY);
    expect_line(fx, "uptime");
    assert_string_equal(fx->echo_buf, "uptime\n");
}

static void test_too_long_is_the_event_on_enter(void **state)
{
    struct fixture *fx = *state;
    char line[LINE_MAX + 2];
    memset(line, 'q', LINE_MAX + 1);
    line[LINE_MAX + 1] = '\0';
    assert_int_equal(feed(fx, line), LINE_NONE);
    assert_int_equal(feed(fx, "\n"), LINE_TOO_LONG);
    assert_int_equal(fx->ed.len, 0);
    assert_int_equal(feed(fx, "\n"), LINE_READY);
    expect_line(fx, "");
}

static void test_backspace_does_not_rescue_an_overlong_line(void **state)
{
    struct fixture *fx = *state;
    char line[LINE_MAX + 6];
    memset(line, 'w', LINE_MAX + 5);
    line[LINE_MAX + 5] = '\0';
    assert_int_equal(feed(fx, line), LINE_NONE);
    clear_echo(fx);
    /* The visible characters are erased on screen, but the line typed was longer than shown. */
    assert_int_equal(feed(fx, "\b\b\b\b\b\b\b\b\b\b"), LINE_NONE);
    assert_int_equal(fx->echo.len, 10 * 3);
    assert_int_equal(fx->ed.len, LINE_MAX - 10);
    assert_int_equal(feed(fx, "\r"), LINE_TOO_LONG);
}

static void test_ctrl_u_clears_an_overlong_line(void **state)
{
    struct fixture *fx = *state;
    char line[LINE_MAX + 6];
    memset(line, 'w', LINE_MAX + 5);
    line[LINE_MAX + 5] = '\0';
    assert_int_equal(feed(fx, line), LINE_NONE);
    clear_echo(fx);
    assert_int_equal(feed(fx, "\x15"), LINE_NONE);
    assert_int_equal(fx->echo.len, LINE_MAX * 3);
    assert_int_equal(feed(fx, "mem\r"), LINE_READY);
    expect_line(fx, "mem");
}

static void test_ctrl_c_clears_an_overlong_line(void **state)
{
    struct fixture *fx = *state;
    char line[LINE_MAX + 6];
    memset(line, 'w', LINE_MAX + 5);
    line[LINE_MAX + 5] = '\0';
    assert_int_equal(feed(fx, line), LINE_NONE);
    assert_int_equal(feed(fx, "\x03"), LINE_CANCEL);
    assert_int_equal(feed(fx, "cpus\r"), LINE_READY);
    expect_line(fx, "cpus");
}

static void test_zeroed_editor_works_like_an_initialised_one(void **state)
{
    struct fixture *fx = *state;
    memset(&fx->ed, 0, sizeof fx->ed);
    assert_int_equal(feed(fx, "hi\r"), LINE_READY);
    expect_line(fx, "hi");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_printable_is_stored_and_echoed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newline_alone_is_enter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_line_is_ready_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backspace_and_delete_erase_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backspace_on_empty_line_echoes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_u_erases_the_visible_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_cancels_and_resets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_on_empty_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crlf_is_one_enter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lf_lf_is_two_enters_and_cr_cr_too, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cr_then_other_key_then_lf_is_another_enter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_char_after_ready_starts_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_bytes_are_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exactly_line_max_is_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ten_thousand_chars_refused_then_next_line_works, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_long_is_the_event_on_enter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backspace_does_not_rescue_an_overlong_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_u_clears_an_overlong_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_clears_an_overlong_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zeroed_editor_works_like_an_initialised_one, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
