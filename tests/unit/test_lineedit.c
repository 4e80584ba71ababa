/* tests/unit/test_lineedit.c: kernel/shell/lineedit.c -- the line each key sequence delivers, the event it returns,
 * and the exact bytes echoed (captured with a buffer_sink). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/shell/lineedit.h"
#include "kernel/lib/sink.h"
#include "unit_main.h"

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

/* One step of a scripted session: the keys fed, the event the last of them must return and, where not NULL,
 * the line the editor then holds and everything echoed since the capture last started. The tests are such
 * scripts, so a failure names the step it happened at. */
struct step {
    const char *keys;
    enum line_event event;
    const char *line;
    const char *echo;
    bool clear_echo; /* restart the echo capture before feeding */
};

static void run_steps(struct fixture *fx, const struct step *steps, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const struct step *s = &steps[i];
        if (s->clear_echo)
            clear_echo(fx);
        enum line_event event = feed(fx, s->keys);
        if (event != s->event)
            fail_msg("step %zu: event %d, expected %d", i, (int)event, (int)s->event);
        if (s->line != NULL && (fx->ed.len != strlen(s->line) || strcmp(fx->ed.buf, s->line) != 0))
            fail_msg("step %zu: line \"%.*s\" (length %zu), expected \"%s\"", i, (int)fx->ed.len, fx->ed.buf,
                     fx->ed.len, s->line);
        if (s->echo != NULL && strcmp(fx->echo_buf, s->echo) != 0)
            fail_msg("step %zu: echo \"%s\", expected \"%s\"", i, fx->echo_buf, s->echo);
    }
}

/* A step, and one that first restarts the echo capture. */
#define STEP(keys, event, line, echo) { (keys), (event), (line), (echo), false }
#define FRESH_STEP(keys, event, line, echo) { (keys), (event), (line), (echo), true }

#define RUN_STEPS(fx, ...)                                                                                      \
    do {                                                                                                       \
        static const struct step steps_[] = { __VA_ARGS__ };                                                   \
        run_steps((fx), steps_, sizeof steps_ / sizeof steps_[0]);                                             \
    } while (0)

/* Types count copies of c, none of which may finish the line: the overlong lines of the tests below. */
static void feed_repeated(struct fixture *fx, char c, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (line_editor_feed(&fx->ed, c, &fx->echo.sink) != LINE_NONE)
            fail_msg("copy %zu of 0x%02x finished the line", i, (unsigned char)c);
}

static void test_printable_is_stored_and_echoed(void **state)
{
    RUN_STEPS(*state, STEP("ps all\r", LINE_READY, "ps all", "ps all\n"));
}

static void test_newline_alone_is_enter(void **state)
{
    RUN_STEPS(*state, STEP("help\n", LINE_READY, "help", "help\n"));
}

static void test_empty_line_is_ready_and_empty(void **state)
{
    RUN_STEPS(*state, STEP("\r", LINE_READY, "", "\n"));
}

static void test_backspace_and_delete_erase_one(void **state)
{
    RUN_STEPS(*state, STEP("abc\b", LINE_NONE, NULL, "abc\b \b"),
              STEP("\x7f" "d\r", LINE_READY, "ad", "abc\b \b\b \bd\n"));
}

static void test_backspace_on_empty_line_echoes_nothing(void **state)
{
    RUN_STEPS(*state, STEP("\b\x7f\b", LINE_NONE, NULL, ""), STEP("x\b\b\by\r", LINE_READY, "y", "x\b \by\n"));
}

static void test_ctrl_u_erases_the_visible_line(void **state)
{
    struct fixture *fx = *state;
    RUN_STEPS(fx, STEP("abc\x15", LINE_NONE, NULL, "abc\b \b\b \b\b \b"));
    assert_int_equal(fx->ed.len, 0);
    RUN_STEPS(fx, FRESH_STEP("\x15" "ok\r", LINE_READY, "ok", "ok\n"));
}

static void test_ctrl_c_cancels_and_resets(void **state)
{
    struct fixture *fx = *state;
    RUN_STEPS(fx, STEP("burn 100\x03", LINE_CANCEL, NULL, "burn 100^C\n"));
    assert_int_equal(fx->ed.len, 0);
    RUN_STEPS(fx, FRESH_STEP("ps\r", LINE_READY, "ps", "ps\n"));
}

static void test_ctrl_c_on_empty_line(void **state)
{
    RUN_STEPS(*state, STEP("\x03", LINE_CANCEL, NULL, "^C\n"));
}

static void test_crlf_is_one_enter(void **state)
{
    /* The '\n' of the CRLF is swallowed: no event, no echo, and the delivered line is left alone. */
    RUN_STEPS(*state, STEP("one\r", LINE_READY, "one", NULL), STEP("\n", LINE_NONE, "one", NULL),
              STEP("two\r", LINE_READY, NULL, NULL), STEP("\n", LINE_NONE, "two", "one\ntwo\n"));
}

static void test_lf_lf_is_two_enters_and_cr_cr_too(void **state)
{
    /* LF then CR is also two Enters: only CR followed by LF pairs up. */
    RUN_STEPS(*state, STEP("a\n", LINE_READY, NULL, NULL), STEP("\n", LINE_READY, "", NULL),
              STEP("\r", LINE_READY, NULL, NULL), STEP("\r", LINE_READY, "", NULL),
              STEP("b\r", LINE_READY, "b", "a\n\n\n\nb\n"));
}

static void test_cr_then_other_key_then_lf_is_another_enter(void **state)
{
    RUN_STEPS(*state, STEP("x\r", LINE_READY, NULL, NULL), STEP("y", LINE_NONE, NULL, NULL),
              STEP("\n", LINE_READY, "y", NULL));
}

static void test_next_char_after_ready_starts_fresh(void **state)
{
    /* A backspace right after Enter must not erase into the delivered line. */
    RUN_STEPS(*state, STEP("longer line\n", LINE_READY, NULL, NULL), STEP("ab\n", LINE_READY, "ab", NULL),
              STEP("\bz\n", LINE_READY, "z", "longer line\nab\nz\n"));
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
    feed_repeated(fx, 'k', LINE_MAX);
    assert_int_equal(feed(fx, "\r"), LINE_READY);
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

    RUN_STEPS(fx, STEP("\r", LINE_TOO_LONG, NULL, NULL), STEP("\n", LINE_NONE, NULL, NULL));
    assert_int_equal(fx->echo.len, LINE_MAX + 1);
    assert_int_equal(fx->echo_buf[LINE_MAX], '\n');
    RUN_STEPS(fx, FRESH_STEP("uptime\r", LINE_READY, "uptime", "uptime\n"));
}

static void test_too_long_is_the_event_on_enter(void **state)
{
    struct fixture *fx = *state;
    feed_repeated(fx, 'q', LINE_MAX + 1);
    assert_int_equal(feed(fx, "\n"), LINE_TOO_LONG);
    assert_int_equal(fx->ed.len, 0);
    RUN_STEPS(fx, STEP("\n", LINE_READY, "", NULL));
}

static void test_backspace_does_not_rescue_an_overlong_line(void **state)
{
    struct fixture *fx = *state;
    feed_repeated(fx, 'w', LINE_MAX + 5);
    clear_echo(fx);
    /* The visible characters are erased on screen, but the line typed was longer than shown. */
    feed_repeated(fx, '\b', 10);
    assert_int_equal(fx->echo.len, 10 * 3);
    assert_int_equal(fx->ed.len, LINE_MAX - 10);
    assert_int_equal(feed(fx, "\r"), LINE_TOO_LONG);
}

static void test_ctrl_u_clears_an_overlong_line(void **state)
{
    struct fixture *fx = *state;
    feed_repeated(fx, 'w', LINE_MAX + 5);
    clear_echo(fx);
    feed_repeated(fx, '\x15', 1);
    assert_int_equal(fx->echo.len, LINE_MAX * 3);
    RUN_STEPS(fx, STEP("mem\r", LINE_READY, "mem", NULL));
}

static void test_ctrl_c_clears_an_overlong_line(void **state)
{
    struct fixture *fx = *state;
    feed_repeated(fx, 'w', LINE_MAX + 5);
    RUN_STEPS(fx, STEP("\x03", LINE_CANCEL, NULL, NULL), STEP("cpus\r", LINE_READY, "cpus", NULL));
}

static void test_zeroed_editor_works_like_an_initialised_one(void **state)
{
    struct fixture *fx = *state;
    memset(&fx->ed, 0, sizeof fx->ed);
    assert_int_equal(feed(fx, "hi\r"), LINE_READY);
    expect_line(fx, "hi");
}

/* ---- a log line drawn above the prompt ---------------------------------------------------------------- */

/* What the redraw writes for a log line of text, with the editor as it is now. */
static const char *redraw(struct fixture *fx, const char *text)
{
    clear_echo(fx);
    line_editor_redraw_above(&fx->ed, "> ", text, strlen(text), &fx->echo.sink);
    return fx->echo_buf;
}

/* Nothing typed: back to the prompt's row, erase it, the line, the prompt again. */
static void test_redraw_with_an_empty_line(void **state)
{
    struct fixture *fx = *state;
    assert_string_equal(redraw(fx, "net: address 10.0.2.15/24 (dhcp)\n"),
                        "\r\033[Knet: address 10.0.2.15/24 (dhcp)\n> ");
}

/* Half a line typed (with an erase on the way): the prompt and what the buffer holds, cursor at its end. */
static void test_redraw_with_a_half_typed_line(void **state)
{
    struct fixture *fx = *state;
    feed(fx, "uptx\bi");
    assert_string_equal(redraw(fx, "usb: keyboard on port 3\n"), "\r\033[Kusb: keyboard on port 3\n> upti");
    /* typing goes on after it, and Enter delivers the whole line */
    assert_int_equal(feed(fx, "me\r"), LINE_READY);
    assert_string_equal(fx->ed.buf, "uptime");
}

/* The editor has no cursor keys, so the cursor is always at the line's end and the redraw leaves it there:
 * there is no "cursor in the middle" to restore. A text without its newline gets one. */
static void test_redraw_adds_a_missing_newline(void **state)
{
    struct fixture *fx = *state;
    feed(fx, "ps");
    assert_string_equal(redraw(fx, "stream: ended"), "\r\033[Kstream: ended\n> ps");
}

/* A line just delivered (Enter) is not drawn again: the shell is past it, its prompt not yet shown. */
static void test_redraw_after_enter_shows_no_old_line(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(feed(fx, "cpus\r"), LINE_READY);
    assert_string_equal(redraw(fx, "x\n"), "\r\033[Kx\n> ");
    /* and a line past LINE_MAX shows what was stored */
    line_editor_init(&fx->ed);
    for (int i = 0; i < LINE_MAX + 5; i++)
        line_editor_feed(&fx->ed, 'a', &fx->echo.sink);
    const char *drawn = redraw(fx, "x\n");
    assert_int_equal(strlen(drawn), strlen("\r\033[Kx\n> ") + LINE_MAX);
}


UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_printable_is_stored_and_echoed, test_newline_alone_is_enter, test_empty_line_is_ready_and_empty,
               test_backspace_and_delete_erase_one, test_backspace_on_empty_line_echoes_nothing,
               test_ctrl_u_erases_the_visible_line, test_ctrl_c_cancels_and_resets, test_ctrl_c_on_empty_line,
               test_crlf_is_one_enter, test_lf_lf_is_two_enters_and_cr_cr_too,
               test_cr_then_other_key_then_lf_is_another_enter, test_next_char_after_ready_starts_fresh,
               test_other_bytes_are_ignored, test_exactly_line_max_is_accepted,
               test_ten_thousand_chars_refused_then_next_line_works, test_too_long_is_the_event_on_enter,
               test_backspace_does_not_rescue_an_overlong_line, test_ctrl_u_clears_an_overlong_line,
               test_ctrl_c_clears_an_overlong_line, test_zeroed_editor_works_like_an_initialised_one,
               test_redraw_with_an_empty_line, test_redraw_with_a_half_typed_line, test_redraw_adds_a_missing_newline,
               test_redraw_after_enter_shows_no_old_line)
