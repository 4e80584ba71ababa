/* tests/unit/test_profiler_stream_request.c: what `profile stream` is asked (kernel/profiler/stream_request.c) --
 * the command's words, each bad form refused, and the rule for where a stream may go and who may stop it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/profiler/stream_request.h"
#include "unit_main.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static bool parse_words(const char *text, struct profile_stream_request *req)
{
    static char copy[256];
    char *argv[16];
    int argc = 0;
    strcpy(copy, text);
    for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "))
        argv[argc++] = w;
    return profile_stream_parse_args(argc, argv, req);
}

static void test_the_commands_words(void **state)
{
    (void)state;
    struct profile_stream_request r;
    assert_true(parse_words("profile stream", &r));
    assert_int_equal(r.action, PROFILE_STREAM_STATUS);
    assert_true(parse_words("profile stream stop", &r));
    assert_int_equal(r.action, PROFILE_STREAM_STOP);
    assert_true(parse_words("profile stream 10.0.2.2:9000", &r));
    assert_int_equal(r.action, PROFILE_STREAM_START);
    assert_true(r.has_host);
    assert_int_equal(r.host, 0x0a000202);
    assert_int_equal(r.port, 9000);
    assert_int_equal(r.seconds, 0);
    assert_false(r.filter.by_pid);
    assert_true(parse_words("profile stream 9000 30 17", &r));
    assert_false(r.has_host);
    assert_int_equal(r.port, 9000);
    assert_int_equal(r.seconds, 30);
    assert_true(r.filter.by_pid);
    assert_int_equal(r.filter.pid, 17);
    assert_true(parse_words("profile stream 9000 30 all", &r));
    assert_false(r.filter.by_pid);
    assert_true(parse_words("profile stream 9000 all", &r));
    assert_int_equal(r.seconds, 0);
    assert_true(parse_words("profile stream 1.2.3.4:65535 86400", &r));
    assert_int_equal(r.seconds, 86400);
    assert_false(r.wall);
    assert_true(parse_words("profile stream 9000 30 17 wall", &r));
    assert_true(r.wall && r.filter.by_pid && r.seconds == 30);
    assert_true(parse_words("profile stream 9000 wall", &r));
    assert_true(r.wall && r.seconds == 0);
    static const char *const bad[] = {
        "profile stream wall", "profile stream 9000 wall 30", "profile stream 9000 30 wall wall",
        "profile stream 9000 30 all 4 wall", "profile stream stop wall",
        "profile stream 0", "profile stream 65536", "profile stream 10.0.2.2", "profile stream 10.0.2.2:",
        "profile stream :9000", "profile stream 10.0.2.256:9000", "profile stream 1.2.3.4:5:6",
        "profile stream 9000 86401", "profile stream 9000 -1", "profile stream 9000 30 all 4",
        "profile stream 9000 30 x", "profile stream stop now", "profile stream start", "profile stream 9000 all all",
        "profile stream 9000x", "profile streams",
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        if (parse_words(bad[i], &r))
            fail_msg("accepted: %s", bad[i]);
}

static bool allow_ten_zero_two(uint32_t ip)
{
    return (ip >> 8) == 0x0a0002;
}

static void test_where_a_stream_may_go(void **state)
{
    (void)state;
    struct profile_stream_request req;
    struct profile_stream_origin console = { false, false, 0 };
    struct profile_stream_origin unkeyed = { true, false, 0x0a000202 };
    struct profile_stream_origin keyed = { true, true, 0x0a000202 };
    uint32_t dst = 0;

    assert_true(parse_words("profile stream 9000", &req));
    assert_non_null(profile_stream_destination(&req, &console, allow_ten_zero_two, &dst));
    assert_null(profile_stream_destination(&req, &unkeyed, allow_ten_zero_two, &dst));
    assert_int_equal(dst, 0x0a000202);

    assert_true(parse_words("profile stream 10.0.2.9:9000", &req));
    dst = 0;
    assert_null(profile_stream_destination(&req, &console, allow_ten_zero_two, &dst));
    assert_int_equal(dst, 0x0a000209);
    assert_null(profile_stream_destination(&req, &keyed, allow_ten_zero_two, &dst));
    const char *why = profile_stream_destination(&req, &unkeyed, allow_ten_zero_two, &dst);
    assert_non_null(why);
    assert_non_null(strstr(why, "own address"));

    assert_true(parse_words("profile stream 10.0.3.9:9000", &req));
    why = profile_stream_destination(&req, &console, allow_ten_zero_two, &dst);
    assert_non_null(why);
    assert_non_null(strstr(why, "allowlist"));
    assert_non_null(profile_stream_destination(&req, &keyed, allow_ten_zero_two, &dst));

    struct profile_stream_origin outsider = { true, false, 0x0a030303 }; /* its own address, not allowlisted */
    assert_true(parse_words("profile stream 9000", &req));
    assert_non_null(profile_stream_destination(&req, &outsider, allow_ten_zero_two, &dst));

    assert_true(profile_stream_may_stop(&console, 0x01020304));
    assert_true(profile_stream_may_stop(&keyed, 0x01020304));
    assert_true(profile_stream_may_stop(&unkeyed, 0x0a000202));
    assert_false(profile_stream_may_stop(&unkeyed, 0x0a000203));
}

UNIT_MAIN(NULL, NULL, test_the_commands_words, test_where_a_stream_may_go)
