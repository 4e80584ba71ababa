/* tests/unit/test_http_host.c: kernel/httpd/http_host.c -- which Host a request to the pprof.http= server may
 * name (address literals with or without a port, localhost, the names pprof.host= gives) and which it may not
 * (any other name: a DNS rebinding page's), and pprof.host='s own parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/httpd/http_host.h"
#include "unit_main.h"

static bool takes(const char *host, const struct http_host_names *names)
{
    return http_host_acceptable(host, strlen(host), names);
}

static void test_address_literals_are_taken_with_or_without_a_port(void **state)
{
    (void)state;
    const char *good[] = { "127.0.0.1", "127.0.0.1:6060", "10.0.2.15:80", "0.0.0.0", "255.255.255.255:65535",
                           "[::1]", "[::1]:6060", "[fe80::5054:ff:fe12:3456]:8080", "[::ffff:10.0.2.15]",
                           "localhost", "LOCALHOST:6060", "localhost." };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_true(takes(good[i], NULL));
}

static void test_names_and_malformed_hosts_are_refused(void **state)
{
    (void)state;
    const char *bad[] = { "rebind.example", "rebind.example:6060", "127.0.0.1.rebind.example", "kprof",
                          "256.0.0.1", "1.2.3", "1.2.3.4.5", "01234.1.1.1", "127.0.0.1:", "127.0.0.1:123456",
                          "127.0.0.1:80x", "[::1", "[::1]x", "[1]", "[rebind.example]", "::1", "", ":6060",
                          "local host", "localhost.rebind.example", "xlocalhost" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (takes(bad[i], NULL))
            fail_msg("took Host '%s'", bad[i]);
    }
}

static void test_names_given_are_taken_in_any_case_with_a_port(void **state)
{
    (void)state;
    struct http_host_names names;
    char error[HTTP_HOST_ERROR_MAX];
    assert_true(http_host_names_parse("kprof.lab.example,Box7.", &names, error, sizeof error));
    assert_int_equal(names.count, 2);
    assert_string_equal(names.name[1], "box7");
    assert_true(takes("kprof.lab.example", &names));
    assert_true(takes("KPROF.Lab.Example.:6060", &names));
    assert_true(takes("box7:80", &names));
    assert_false(takes("lab.example", &names));
    assert_false(takes("kprof.lab.example.evil", &names));
    assert_false(takes("box", &names));
    assert_true(takes("10.0.2.15", &names)); /* addresses still */
}

static void test_a_bad_pprof_host_says_why_and_keeps_nothing(void **state)
{
    (void)state;
    struct http_host_names names = { .count = 1, .name = { "kept" } };
    char error[HTTP_HOST_ERROR_MAX];
    const char *bad[] = { "", "a,,b", "a,", "has space", "under_score", "a..b", ".a", "a,b,c,d,e" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error[0] = 0;
        if (http_host_names_parse(bad[i], &names, error, sizeof error))
            fail_msg("took pprof.host=%s", bad[i]);
        assert_true(error[0] && !strchr(error, '\n'));
    }
    assert_int_equal(names.count, 1);
    assert_string_equal(names.name[0], "kept");
    char label64[80];
    memset(label64, 'a', 64);
    label64[64] = 0;
    assert_false(http_host_names_parse(label64, &names, error, sizeof error));
    label64[63] = 0;
    assert_true(http_host_names_parse(label64, &names, error, sizeof error));
}

UNIT_MAIN(NULL, NULL,
          test_address_literals_are_taken_with_or_without_a_port, test_names_and_malformed_hosts_are_refused,
          test_names_given_are_taken_in_any_case_with_a_port, test_a_bad_pprof_host_says_why_and_keeps_nothing)
