/* tests/unit/test_profiler_args.c: the `profile` command's argument parser (kernel/profiler/args.c) on every
 * good and bad form. The command around it is tests/unit/test_cmd_profile.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "shell_line.h"
#include "kernel/labels.h"
#include "kernel/profiler/args.h"
#include "unit_main.h"

/* ---- the parser --------------------------------------------------------------------------------------- */

/* Parses a space-separated line (the command's name first) into req. */
static bool parse_line(const char *line, struct profile_request *req)
{
    char *argv[SHELL_LINE_WORDS];
    int argc = shell_line_split(line, argv);
    return profile_parse_args(argc, argv, req);
}

static void expect_request(const char *line, uint32_t ms, bool by_pid, uint32_t pid, unsigned chains)
{
    struct profile_request req;
    memset(&req, 0xa5, sizeof req);
    assert_true(parse_line(line, &req));
    assert_int_equal(req.ms, ms);
    assert_int_equal(req.filter.by_pid, by_pid);
    if (by_pid)
        assert_int_equal(req.filter.pid, pid);
    assert_int_equal(req.chains, chains);
}

static void expect_refused(const char *line)
{
    struct profile_request req;
    if (parse_line(line, &req))
        fail_msg("\"%s\" was accepted", line);
}

/* Each of the lines refused (a failure names the line): EXPECT_REFUSED("profile 0", "profile x", ...). */
static void expect_each_refused(const char *const *lines)
{
    for (; *lines; lines++)
        expect_refused(*lines);
}
#define EXPECT_REFUSED(...) expect_each_refused((const char *const[]){ __VA_ARGS__, NULL })

static void test_defaults(void **state)
{
    (void)state;
    expect_request("profile", 1000, false, 0, 8);
}

static void test_window(void **state)
{
    (void)state;
    expect_request("profile 1", 1, false, 0, 8);
    expect_request("profile 500", 500, false, 0, 8);
    expect_request("profile 2000", 2000, false, 0, 8);
    expect_request("profile 0x10", 16, false, 0, 8);
}

static void test_bad_window(void **state)
{
    (void)state;
    EXPECT_REFUSED("profile 0", "profile 2001", "profile -5", "profile abc", "profile 12x", "profile +5",
                   "profile 99999999999999999999999", "profile all");
}

static void test_all_or_pid(void **state)
{
    (void)state;
    expect_request("profile 500 12", 500, true, 12, 8);
    expect_request("profile 500 all", 500, false, 0, 8);
    expect_request("profile 2000 all 3", 2000, false, 0, 3);
    expect_request("profile 100 7 20", 100, true, 7, 20);
    expect_request("profile 100 0", 100, true, 0, 8);
    expect_request("profile 100 4294967295", 100, true, 4294967295u, 8);
}

static void test_bad_pid(void **state)
{
    (void)state;
    EXPECT_REFUSED("profile 500 -5", "profile 500 abc", "profile 500 12x", "profile 500 ALL", "profile 500 al",
                   "profile 500 4294967296");
}

static void test_chains(void **state)
{
    (void)state;
    expect_request("profile 1000 all 1", 1000, false, 0, 1);
    expect_request("profile 1000 all 128", 1000, false, 0, 128);
    EXPECT_REFUSED("profile 1000 all 0", "profile 1000 all 129", "profile 1000 all -5", "profile 1000 all abc",
                   "profile 1000 all 12x", "profile 1000 all all");
}

static void test_extra_words(void **state)
{
    (void)state;
    EXPECT_REFUSED("profile 1000 all 3 4", "profile 1000 all 3 x", "profile 1 2 3 4 5 6");
}

/* The parsed request of line, which must be accepted. */
static struct profile_request request_of(const char *line)
{
    struct profile_request req;
    memset(&req, 0xa5, sizeof req);
    if (!parse_line(line, &req))
        fail_msg("\"%s\" was refused", line);
    return req;
}

static void test_label_filter_anywhere_after_the_name(void **state)
{
    (void)state;
    static const char *lines[] = {
        "profile 1000 all 3 job=a", "profile job=a 1000 all 3", "profile 1000 job=a all 3", "profile 1000 all job=a 3",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        struct profile_request req = request_of(lines[i]);
        assert_int_equal(req.ms, 1000);
        assert_false(req.filter.by_pid);
        assert_int_equal(req.chains, 3);
        assert_false(req.raw);
        assert_true(req.filter.by_label);
        assert_string_equal(req.filter.label.key, "job");
        assert_string_equal(req.filter.label.value, "a");
    }
    struct profile_request req = request_of("profile 500 12 cmd=profile");
    assert_true(req.filter.by_pid);
    assert_int_equal(req.filter.pid, 12);
    assert_string_equal(req.filter.label.value, "profile");
    req = request_of("profile net.load=Sink/1");
    assert_int_equal(req.ms, 1000);
    assert_string_equal(req.filter.label.key, "net.load");
    assert_string_equal(req.filter.label.value, "Sink/1");
    req = request_of("profile 500");
    assert_false(req.filter.by_label);
}

static void test_bad_label_filters(void **state)
{
    (void)state;
    expect_refused("profile 1000 job=a job=b"); /* at most one */
    EXPECT_REFUSED("profile 1000 job=a job=a", "profile 1000 job=", "profile 1000 =a", "profile 1000 Job=a",
                   "profile 1000 job=a=b", "profile 1000 job=a,b", "profile 1000 0123456789abcdef=a",
                   "profile 1000 k=ABCDEFGHIJKLMNOPQRSTUVWX", "profile 1000 all 3 4 job=a", "profile 0 job=a");
}

static void test_raw(void **state)
{
    (void)state;
    struct profile_request req = request_of("profile 500 all raw");
    assert_true(req.raw);
    assert_int_equal(req.ms, 500);
    assert_false(req.filter.by_pid);
    req = request_of("profile 500 raw");
    assert_true(req.raw);
    assert_false(req.filter.by_pid);
    req = request_of("profile 500 12 raw job=a");
    assert_true(req.raw);
    assert_true(req.filter.by_pid);
    assert_int_equal(req.filter.pid, 12);
    assert_true(req.filter.by_label);
    req = request_of("profile raw");
    assert_true(req.raw);
    assert_int_equal(req.ms, 1000);
    expect_refused("profile 500 all 3 raw"); /* no chain count with raw */
    EXPECT_REFUSED("profile 500 raw raw", "profile 500 all RAW", "profile 500 all raw2");
}

static void test_wall(void **state)
{
    (void)state;
    struct profile_request req = request_of("profile 2000 all 12 wall");
    assert_true(req.wall);
    assert_false(req.raw);
    assert_int_equal(req.ms, 2000);
    assert_int_equal(req.chains, 12);
    req = request_of("profile wall");
    assert_true(req.wall);
    assert_int_equal(req.ms, 1000);
    req = request_of("profile 500 wall 7 raw work=serve");
    assert_true(req.wall && req.raw && req.filter.by_pid && req.filter.by_label);
    assert_int_equal(req.filter.pid, 7);
    req = request_of("profile 500 all");
    assert_false(req.wall);
    EXPECT_REFUSED("profile 500 wall wall", "profile 500 WALL", "profile 500 walls", "profile 500 all 3 raw wall");
}

UNIT_MAIN(NULL, NULL,
          test_defaults, test_window, test_bad_window, test_all_or_pid, test_bad_pid, test_chains, test_extra_words,
          test_label_filter_anywhere_after_the_name, test_bad_label_filters, test_raw, test_wall)
