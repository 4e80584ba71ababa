/* tests/unit/test_cmd_profile_top.c: the `profile top` command (kernel/shell/cmd_profile_top.c) over the real
 * profiler and sessions: N intervals, each a session of its own whose frame follows it; on the console each
 * frame after cursor home and erase, "(any key stops)" under every frame but the last, and a key pressed in an
 * interval ending top after that interval's frame (the key taken); over UDP no control sequence and each frame
 * flushed to the reply; the profiler free between intervals, and a start refused there answered with the busy
 * line every start gives; bad words one line and nothing started. The kernel around it is
 * profiler_burn_fixture.h's (two CPUs ticked in BurnInner during the window's sleeps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "profiler_burn_fixture.h"
#include "shell_line.h"
#include "unit_main.h"
#include "kernel/profiler.h"
#include "kernel/profiler/session.h"
#include "kernel/shell/commands.h"
#include "kernel/task.h"

static char output[65536];
static size_t used;
static int sleeps_before_key;   /* > 0: that many sleeps of the window, then a key is pressed */
static bool claim_after_frame;  /* another user claims the profiler when the first frame is written */
static struct profile_run other; /* its run */
static bool other_started;

void task_sleep_until(int64_t when_ns)
{
    burn_window_sleep(when_ns);
    fake_time_ns = when_ns;
    if (sleeps_before_key > 0 && --sleeps_before_key == 0)
        fake_console_keys = 1;
}

/* The reply: text as written, "|" where the command flushed. */
static void record_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink;
    assert_true(used + len < sizeof output);
    memcpy(output + used, text, len);
    used += len;
    output[used] = 0;
    /* Between intervals: the frame has been written, the next interval has not started. */
    if (claim_after_frame && strstr(output, "top 1/")) {
        claim_after_frame = false;
        assert_int_equal(profiler_start(&other), PROFILER_OK);
        other_started = true;
    }
}

static void record_flush(struct sink *sink)
{
    record_write(sink, "|", 1);
}

static int run(const char *line, bool udp)
{
    static const struct shell_origin console = { 0 }, net = { .udp = true, .ip = 0x0a000202, .port = 4000 };
    char copy[256];
    char *argv[SHELL_LINE_WORDS];
    int argc = shell_line_words(copy, sizeof copy, line, argv);
    struct sink sink = { .write = record_write, .flush = record_flush };
    used = 0;
    output[0] = 0;
    return cmd_profile(argc, argv, &sink, udp ? &net : &console);
}

static unsigned count(const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(output, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static int setup(void **state)
{
    (void)state;
    burn_setup(1);
    burn_ticks_per_sleep = 1;
    sleeps_before_key = 0;
    claim_after_frame = false;
    other_started = false;
    fake_console_keys = 0;
    fake_console_key = 'q';
    return 0;
}

/* One frame exactly: 2 sleeps of 50 ms, each a tick on both CPUs in BurnInner. */
static void test_one_frame(void **state)
{
    (void)state;
    assert_int_equal(run("profile top 100 1", true), 0);
    assert_string_equal(output, "top 1/1: 100 ms, 4 samples (4 since start)\n"
                                "source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                                "   last  since  function\n"
                                " 100.0% 100.0%  BurnInner\n"
                                "|");
    burn_expect_profiler_free();
}

/* Over UDP: N frames in order, each flushed as its own datagram, not one control sequence. */
static void test_udp_frames_each_flushed(void **state)
{
    (void)state;
    assert_int_equal(run("profile top 100 3", true), 0);
    assert_int_equal(count("|"), 3);
    assert_int_equal(count("\033"), 0);
    const char *a = strstr(output, "top 1/3:"), *b = strstr(output, "top 2/3:"), *c = strstr(output, "top 3/3:");
    assert_true(a && b && c && a < b && b < c);
    assert_non_null(strstr(b, "(8 since start)"));
    assert_int_equal(count("(any key stops)"), 0);
    assert_int_equal(burn_sleeps, 3 * 2);
}

/* Over UDP without N: the fixed count. */
static void test_udp_default_count(void **state)
{
    (void)state;
    assert_int_equal(run("profile top 100", true), 0);
    assert_int_equal(count("|"), 5);
    assert_non_null(strstr(output, "top 5/5:"));
}

/* On the console: cursor home and erase before each frame, the hint under all but the last. */
static void test_console_redraws(void **state)
{
    (void)state;
    assert_int_equal(run("profile top 100 3", false), 0);
    assert_int_equal(count("\033[H\033[J"), 3);
    assert_int_equal(count("\033"), 6);
    assert_int_equal(count("(any key stops)\n"), 2);
    const char *last = strstr(output, "\033[H\033[Jtop 3/3:");
    assert_non_null(last);
    assert_null(strstr(last, "(any key stops)"));
}

/* A key in the second interval (no N: until a key) ends it there: two frames, the key taken, the profiler free. */
static void test_a_key_stops(void **state)
{
    (void)state;
    sleeps_before_key = 11; /* the first sleep of the second interval (10 a 500 ms window) */
    assert_int_equal(run("profile top 500", false), 0);
    assert_int_equal(count("\033[H\033[J"), 2);
    assert_non_null(strstr(output, "top 2: "));
    assert_null(strstr(output, "top 3: "));
    assert_int_equal(fake_console_keys, 0);
    assert_int_equal(burn_sleeps, 10 + 1); /* the second window cut short after its first step */
    burn_expect_profiler_free();
}

/* The LF of a CR LF Enter, waiting when top starts, is taken and is no key: top runs its N intervals. */
static void test_the_lf_of_crlf_is_no_key(void **state)
{
    (void)state;
    fake_console_keys = 1;
    fake_console_key = '\n';
    assert_int_equal(run("profile top 100 2", false), 0);
    assert_int_equal(fake_console_keys, 0);
    assert_int_equal(count("\033[H\033[J"), 2);
    assert_non_null(strstr(output, "top 2/2:"));
}

/* Between intervals the profiler is free: another user claims it after the first frame, and the next interval
 * says who holds it, as every start does, and top ends. */
static void test_free_between_intervals_then_busy(void **state)
{
    (void)state;
    claim_after_frame = true;
    assert_int_equal(run("profile top 100 3", true), 1);
    assert_true(other_started);
    assert_int_equal(count("top "), 1);
    assert_non_null(strstr(output, "|profile top: busy\n"));
    profiler_stop(&other);
    profiler_release();
    burn_expect_profiler_free();
}

/* Held by a session from the start: its busy line, and nothing run. */
static void test_busy_from_the_start(void **state)
{
    (void)state;
    struct profile_session held;
    burn_hold_profiler(&held, 0, "a stream to 10.0.2.2:9000");
    assert_int_equal(run("profile top 100 3", false), 1);
    assert_string_equal(output, "profile top: busy: a stream to 10.0.2.2:9000\n");
    assert_int_equal(burn_sleeps, 0);
    profiler_stop(&held.run);
    profiler_release();
}

static void test_bad_words_start_nothing(void **state)
{
    (void)state;
    assert_int_equal(run("profile top 20 3", false), 1);
    assert_string_equal(output, "profile top: the interval must be 100..10000 ms, not 20\n");
    assert_int_equal(run("profile top 100 3 3", false), 1);
    assert_string_equal(output, "usage: profile top [ms] [N]\n");
    assert_int_equal(burn_sleeps, 0);
    burn_expect_profiler_free();
}

UNIT_MAIN_EACH(setup, NULL, burn_setup_group, NULL, test_one_frame, test_udp_frames_each_flushed,
               test_udp_default_count, test_console_redraws, test_a_key_stops, test_the_lf_of_crlf_is_no_key,
               test_free_between_intervals_then_busy, test_busy_from_the_start, test_bad_words_start_nothing)
