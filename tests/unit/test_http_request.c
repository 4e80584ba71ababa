/* tests/unit/test_http_request.c: kernel/httpd/http_request.c -- every refusal of http_request.h with its status,
 * the limits at their edges, the same answer for every split of the same bytes, the query's %-decoding and the
 * bearer token. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/httpd/http_request.h"
#include "unit_main.h"

static struct http_request req;

/* Feeds text in one piece; returns the state. */
static enum http_parse feed(const char *text)
{
    http_request_init(&req);
    size_t used;
    return http_request_feed(&req, (const uint8_t *)text, strlen(text), &used);
}

static void refused_with(const char *text, int status)
{
    if (feed(text) != HTTP_PARSE_REFUSED)
        fail_msg("not refused: %.60s", text);
    if (req.status != status)
        fail_msg("%.60s: %d (%s), wanted %d", text, req.status, req.reason, status);
    assert_true(req.reason[0] != 0);
    assert_null(strchr(req.reason, '\n'));
}

static void test_a_plain_get_is_done(void **state)
{
    (void)state;
    assert_int_equal(feed("GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n"), HTTP_PARSE_DONE);
    assert_true(http_request_path_is(&req, "/debug/pprof/"));
    assert_false(http_request_path_is(&req, "/debug/pprof"));
    assert_false(req.bearer_present);
    assert_int_equal(feed("GET / HTTP/1.0\n\n"), HTTP_PARSE_DONE); /* bare LF, and 1.0 needs no Host */
    assert_true(http_request_path_is(&req, "/"));
    assert_int_equal(feed("\r\nGET / HTTP/1.0\r\n\r\n"), HTTP_PARSE_DONE); /* an empty line first is ignored */
}

static void test_an_unfinished_head_wants_more(void **state)
{
    (void)state;
    assert_int_equal(feed("GET / HTTP/1.1\r\nHost: x\r\n"), HTTP_PARSE_MORE);
    assert_int_equal(feed("GET / HTT"), HTTP_PARSE_MORE);
    assert_int_equal(feed(""), HTTP_PARSE_MORE);
}

static void test_each_refusal_has_its_status(void **state)
{
    (void)state;
    refused_with("POST / HTTP/1.1\r\n", 405);
    refused_with("HEAD / HTTP/1.1\r\n", 405);
    refused_with("get / HTTP/1.1\r\n", 405);
    refused_with("GET / HTTP/2.0\r\n", 505);
    refused_with("GET / HTTP/1.2\r\n", 505);
    refused_with("GET / HTTP/0.9\r\n", 505);
    refused_with("GET / HTTP/1.10\r\n", 400);
    refused_with("GET / http/1.1\r\n", 400);
    refused_with("GET /\r\n", 400);
    refused_with("GET  / HTTP/1.1\r\n", 400);
    refused_with("GET / HTTP/1.1 \r\n", 400);
    refused_with("G(T / HTTP/1.1\r\n", 400);
    refused_with("GET x HTTP/1.1\r\n", 400);
    refused_with("GET /a\x01 HTTP/1.1\r\n", 400);
    refused_with("GET /\x80 HTTP/1.1\r\n", 400);
    refused_with("GET /a\rb HTTP/1.1\r\n", 400);
    refused_with("GET /?a=%zz HTTP/1.1\r\n", 400);
    refused_with("GET /?a=%2 HTTP/1.1\r\n", 400);
    refused_with("GET / HTTP/1.1\r\n\r\n", 400); /* 1.1 without Host */
    refused_with("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nno colon\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nName : v\r\n", 400);
    refused_with("GET / HTTP/1.1\r\n: v\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nX: a\x02\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nContent-Length: 5\r\n", 400);
    refused_with("GET / HTTP/1.1\r\ncontent-length: x\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n", 400);
    refused_with("GET / HTTP/1.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n", 400);
    /* Content-Length: 0 is no body */
    assert_int_equal(feed("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 00\r\n\r\n"), HTTP_PARSE_DONE);
}

static void test_limits_at_their_edges(void **state)
{
    (void)state;
    static char text[HTTP_HEAD_MAX * 2 + 64];
    /* A target of exactly HTTP_TARGET_MAX bytes is taken; one more is 414. */
    for (int extra = 0; extra <= 1; extra++) {
        strcpy(text, "GET /");
        size_t n = strlen(text);
        memset(text + n, 'a', HTTP_TARGET_MAX - 1 + extra);
        strcpy(text + n + HTTP_TARGET_MAX - 1 + extra, " HTTP/1.0\r\n\r\n");
        if (extra)
            refused_with(text, 414);
        else
            assert_int_equal(feed(text), HTTP_PARSE_DONE);
    }
    /* A head of exactly HTTP_HEAD_MAX bytes is taken; one byte more is 431. */
    for (int extra = 0; extra <= 1; extra++) {
        const char *start = "GET / HTTP/1.0\r\nX: ";
        strcpy(text, start);
        size_t fill = HTTP_HEAD_MAX - strlen(start) - 4 + extra;
        memset(text + strlen(start), 'v', fill);
        strcpy(text + strlen(start) + fill, "\r\n\r\n");
        assert_int_equal(strlen(text), HTTP_HEAD_MAX + extra);
        if (extra)
            refused_with(text, 431);
        else
            assert_int_equal(feed(text), HTTP_PARSE_DONE);
    }
    /* A request line that never ends within the limit: 414; 64 KiB of headers: 431 after 8 KiB taken. */
    memset(text, 'a', sizeof text - 1);
    memcpy(text, "GET /", 5);
    text[sizeof text - 1] = 0;
    refused_with(text, 414);
    char *big = malloc(65536 + 64);
    strcpy(big, "GET / HTTP/1.1\r\nHost: a\r\nX: ");
    memset(big + strlen(big), 'h', 65536);
    big[65536 + 28] = 0;
    http_request_init(&req);
    size_t used;
    assert_int_equal(http_request_feed(&req, (uint8_t *)big, strlen(big), &used), HTTP_PARSE_REFUSED);
    assert_int_equal(req.status, 431);
    assert_int_equal(used, HTTP_HEAD_MAX);
    free(big);
}

/* The bytes the splits test feeds: refusals of each kind, and accepted heads. */
static const char *const split_cases[] = {
    "GET /debug/pprof/profile?seconds=5&x=%41+b HTTP/1.1\r\nHost: 10.0.2.15\r\nAuthorization: Bearer abc\r\n\r\n",
    "GET / HTTP/1.0\n\n",
    "POST / HTTP/1.1\r\n\r\n",
    "GET / HTTP/3.0\r\n",
    "GET / HTTP/1.1\r\nX: a\x02\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx",
    "\r\n\r\nGET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\n",
};

static void test_every_split_gives_the_same_answer(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof split_cases / sizeof split_cases[0]; c++) {
        const uint8_t *text = (const uint8_t *)split_cases[c];
        size_t len = strlen(split_cases[c]);
        static struct http_request whole;
        http_request_init(&whole);
        size_t whole_used;
        http_request_feed(&whole, text, len, &whole_used);
        for (size_t a = 0; a <= len; a++) {
            for (size_t b = a; b <= len; b++) {
                http_request_init(&req);
                size_t used = 0, u;
                http_request_feed(&req, text, a, &u);
                used += u;
                if (req.state == HTTP_PARSE_MORE) {
                    http_request_feed(&req, text + a, b - a, &u);
                    used += u;
                }
                if (req.state == HTTP_PARSE_MORE) {
                    http_request_feed(&req, text + b, len - b, &u);
                    used += u;
                }
                assert_int_equal(req.state, whole.state);
                assert_int_equal(req.status, whole.status);
                assert_string_equal(req.reason, whole.reason);
                assert_string_equal(req.target, whole.target);
                assert_string_equal(req.bearer, whole.bearer);
                assert_int_equal(used, whole_used);
            }
        }
    }
}

static void test_the_query_is_decoded(void **state)
{
    (void)state;
    assert_int_equal(feed("GET /p?seconds=5&name=a%20b+c%2F&empty=&bare&seconds=9 HTTP/1.0\r\n\r\n"),
                     HTTP_PARSE_DONE);
    assert_true(http_request_path_is(&req, "/p"));
    char v[16];
    assert_int_equal(http_request_query(&req, "seconds", v, sizeof v), 1);
    assert_string_equal(v, "5"); /* the first of two */
    assert_int_equal(http_request_query(&req, "name", v, sizeof v), 1);
    assert_string_equal(v, "a b c/");
    assert_int_equal(http_request_query(&req, "empty", v, sizeof v), 1);
    assert_string_equal(v, "");
    assert_int_equal(http_request_query(&req, "bare", v, sizeof v), 1);
    assert_string_equal(v, "");
    assert_int_equal(http_request_query(&req, "missing", v, sizeof v), 0);
    char tiny[3];
    assert_int_equal(http_request_query(&req, "name", tiny, sizeof tiny), -1);
    assert_int_equal(feed("GET /p?%73econds=7 HTTP/1.0\r\n\r\n"), HTTP_PARSE_DONE); /* names decode too */
    assert_int_equal(http_request_query(&req, "seconds", v, sizeof v), 1);
    assert_string_equal(v, "7");
    assert_int_equal(feed("GET /p HTTP/1.0\r\n\r\n"), HTTP_PARSE_DONE);
    assert_int_equal(http_request_query(&req, "seconds", v, sizeof v), 0);
}

static void test_the_bearer_token_is_taken(void **state)
{
    (void)state;
    assert_int_equal(feed("GET / HTTP/1.0\r\nauthorization:   bearer   tok.en-1  \r\n\r\n"), HTTP_PARSE_DONE);
    assert_true(req.bearer_present);
    assert_string_equal(req.bearer, "tok.en-1");
    assert_int_equal(feed("GET / HTTP/1.0\r\nAuthorization: Basic dXNlcjpwYXNz\r\n\r\n"), HTTP_PARSE_DONE);
    assert_false(req.bearer_present);
    assert_int_equal(feed("GET / HTTP/1.0\r\nAuthorization: Bearer\r\n\r\n"), HTTP_PARSE_DONE);
    assert_false(req.bearer_present);
    char text[400];
    snprintf(text, sizeof text, "GET / HTTP/1.0\r\nAuthorization: Bearer %0*d\r\n\r\n", HTTP_BEARER_MAX + 1, 0);
    assert_int_equal(feed(text), HTTP_PARSE_DONE);
    assert_true(req.bearer_present);
    assert_true(req.bearer_too_long);
    assert_string_equal(req.bearer, "");
}

static void test_the_host_is_kept_for_its_check(void **state)
{
    (void)state;
    assert_int_equal(feed("GET / HTTP/1.1\r\nhost: \t Rebind.Example:6060 \r\n\r\n"), HTTP_PARSE_DONE);
    assert_string_equal(req.host, "Rebind.Example:6060");
    assert_int_equal(req.host_len, strlen("Rebind.Example:6060"));
    assert_int_equal(feed("GET / HTTP/1.0\r\n\r\n"), HTTP_PARSE_DONE);
    assert_false(req.has_host);
    assert_string_equal(req.host, "");
    char text[400];
    snprintf(text, sizeof text, "GET / HTTP/1.1\r\nHost: %0*d\r\n\r\n", HTTP_HOST_MAX, 0);
    assert_int_equal(feed(text), HTTP_PARSE_DONE);
    assert_int_equal(req.host_len, HTTP_HOST_MAX);
    snprintf(text, sizeof text, "GET / HTTP/1.1\r\nHost: %0*d\r\n\r\n", HTTP_HOST_MAX + 1, 0);
    refused_with(text, 400);
}

UNIT_MAIN(NULL, NULL,
          test_a_plain_get_is_done, test_an_unfinished_head_wants_more, test_each_refusal_has_its_status,
          test_limits_at_their_edges, test_every_split_gives_the_same_answer, test_the_query_is_decoded,
          test_the_bearer_token_is_taken, test_the_host_is_kept_for_its_check)
