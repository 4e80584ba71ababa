/* tests/fuzz/fuzz_http_request.c: the pprof.http= server's request-head parser (kernel/httpd/http_request.c)
 * on any bytes, fed whole and again in pieces the input's first bytes choose: never out of bounds, the same
 * answer for both feedings, never more than HTTP_HEAD_MAX bytes taken, a refusal always with a status the
 * header names and a one-line reason, a complete head always a GET of a target starting with '/' no longer
 * than HTTP_TARGET_MAX, and every query value decodes or says it does not fit; the Host check
 * (kernel/httpd/http_host.c) then runs on whatever Host the head kept. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/httpd/http_request.h"

static struct http_request whole, split;
static const struct http_host_names names = { .count = 1, .name = { "kprof.example" } };

static bool known_status(int s)
{
    return s == 400 || s == 405 || s == 414 || s == 431 || s == 505;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned step = data[0] % 17 + 1; /* piece sizes for the split feeding: 1..17, varied by data[1] */
    uint8_t vary = data[1];
    data += 2;
    size -= 2;

    http_request_init(&whole);
    size_t whole_used;
    enum http_parse r = http_request_feed(&whole, data, size, &whole_used);
    CHECK(r == whole.state);
    CHECK(whole_used <= size && whole_used <= HTTP_HEAD_MAX);
    CHECK(r == HTTP_PARSE_MORE ? whole_used == size : true);

    http_request_init(&split);
    size_t at = 0, used_total = 0;
    while (at < size && split.state == HTTP_PARSE_MORE) {
        size_t n = step + (vary = (uint8_t)(vary * 37 + 11)) % 5;
        if (n > size - at)
            n = size - at;
        size_t used;
        http_request_feed(&split, data + at, n, &used);
        used_total += used;
        at += n;
    }
    CHECK(split.state == whole.state && split.status == whole.status && used_total == whole_used);
    CHECK(strcmp(split.reason, whole.reason) == 0 && strcmp(split.target, whole.target) == 0);
    CHECK(strcmp(split.bearer, whole.bearer) == 0 && strcmp(split.host, whole.host) == 0);

    if (whole.state == HTTP_PARSE_REFUSED) {
        CHECK(known_status(whole.status));
        CHECK(whole.reason[0] && !strchr(whole.reason, '\n'));
    } else if (whole.state == HTTP_PARSE_DONE) {
        CHECK(whole.target[0] == '/' && strlen(whole.target) <= HTTP_TARGET_MAX);
        CHECK(whole.path_len <= strlen(whole.target));
        CHECK(strlen(whole.bearer) <= HTTP_BEARER_MAX);
        CHECK(whole.host_len == strlen(whole.host) && whole.host_len <= HTTP_HOST_MAX);
        /* the Host check on whatever was sent: in bounds, and a name is never taken when none was given */
        bool taken = http_host_acceptable(whole.host, whole.host_len, &names);
        CHECK(!taken || !strchr(whole.host, '_'));
        char value[32];
        int q = http_request_query(&whole, "seconds", value, sizeof value);
        CHECK(q == 1 ? strlen(value) < sizeof value : q == 0 || q == -1);
    }
    return 0;
}
