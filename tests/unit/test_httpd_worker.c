/* tests/unit/test_httpd_worker.c: kernel/httpd/httpd_worker.c and pages.c over a fake profiler -- routing (the
 * pages, 302, 404, the profile's seconds), what each pprof_profile_take result becomes (200 with its headers,
 * 429 busy, 503, nothing when cancelled), the queue served from the profile's hook while it runs (pages answered,
 * another profile 429 with the seconds left), the client's going away ending the profile, the bounded queue and
 * the wait limit, the command line page redacting udpsh.key=. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/httpd/httpd_conn.h"
#include "kernel/profiler/pprof.h"
#include "kernel/shell/commands.h"
#include "kernel/task.h"
#include "unit_main.h"

/* ---- what the worker calls ---- */
void *kmalloc(size_t size) { return malloc(size); }
void kfree(void *p) { free(p); }
static struct task fake_worker;
struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    (void)name, (void)entry, (void)arg, (void)cpu;
    return &fake_worker;
}
void task_block(void) {}
void task_wake(struct task *t) { (void)t; }
const char *platform_cmdline(void) { return "pprof.http=6060  udpsh.key=00112233445566778899aabbccddeeff quiet"; }
int cmd_lscpu(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)argc, (void)from;
    sink_printf(out, "%s: the console's lines\n", argv[0]);
    return 0;
}
int cmd_cpus(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)argc, (void)argv, (void)from;
    sink_puts(out, "CPU APIC ONLINE TICKS BUSY\n");
    return 0;
}

static struct httpd_conn *answered[16];
static unsigned answered_count;
void httpd_answered(struct httpd_conn *c) { answered[answered_count++] = c; }

/* The fake profiler: calls the hook `hooks` times, running between_hooks before the first, and returns result
 * (PPROF_CANCELLED as soon as the hook says so). */
static int result;
static unsigned hooks, hooks_run, takes;
static uint32_t seconds_asked;
static void (*between_hooks)(void);
int pprof_profile_take(uint32_t seconds, pprof_window_hook hook, void *hook_arg, struct pprof_body *out,
                       char *busy_text, size_t busy_cap)
{
    takes++;
    seconds_asked = seconds;
    memset(out, 0, sizeof *out);
    for (hooks_run = 0; hooks_run < hooks; hooks_run++) {
        if (hooks_run == 0 && between_hooks)
            between_hooks();
        if (hook(hook_arg))
            return PPROF_CANCELLED;
    }
    if (result == PPROF_BUSY)
        snprintf(busy_text, busy_cap, "busy: the console's profile holds the profiler");
    if (result == PPROF_OK) {
        out->data = (uint8_t *)strdup("PPROFDATA");
        out->len = 9;
    }
    return result;
}
void pprof_body_free(struct pprof_body *body) { free(body->data); }

/* ---- the test's side ---- */
static struct httpd_conn conns[8];

static struct httpd_conn *request(unsigned i, const char *text)
{
    struct httpd_conn *c = &conns[i];
    free(c->resp.data);
    memset(c, 0, sizeof *c);
    http_request_init(&c->req);
    http_request_feed(&c->req, (const uint8_t *)text, strlen(text), 0);
    assert_int_equal(c->req.state, HTTP_PARSE_DONE);
    c->queued_ns = fake_time_ns;
    return c;
}

static struct httpd_conn *get(unsigned i, const char *path)
{
    char text[256];
    snprintf(text, sizeof text, "GET %s HTTP/1.0\r\n\r\n", path);
    return request(i, text);
}

static const char *resp_text(const struct httpd_conn *c)
{
    static char text[20000];
    assert_non_null(c->resp.data);
    memcpy(text, c->resp.data, c->resp.len);
    text[c->resp.len] = 0;
    return text;
}

static void assert_status(const struct httpd_conn *c, int status)
{
    char line[40];
    snprintf(line, sizeof line, "HTTP/1.1 %d ", status);
    if (strncmp(resp_text(c), line, strlen(line)) != 0)
        fail_msg("wanted %d, got: %.200s", status, resp_text(c));
    assert_int_equal(c->resp.status, status);
    assert_non_null(strstr(resp_text(c), "\r\nConnection: close\r\n\r\n"));
}

static const char *body(const struct httpd_conn *c)
{
    return strstr(resp_text(c), "\r\n\r\n") + 4;
}

static int setup(void **state)
{
    (void)state;
    answered_count = 0;
    result = PPROF_OK;
    hooks = 2;
    takes = 0;
    between_hooks = 0;
    fake_time_ns = 1000000000000ll;
    while (httpd_queue_pop())
        ;
    assert_true(httpd_worker_start());
    return 0;
}

static void test_pages_and_redirect_and_404(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/pprof/");
    httpd_serve(c);
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "Content-Type: text/html"));
    assert_non_null(strstr(body(c), "<a href=\"profile?seconds=5\">"));
    httpd_serve(c = get(0, "/debug/pprof/lscpu"));
    assert_status(c, 200);
    assert_string_equal(body(c), "lscpu: the console's lines\n");
    assert_non_null(strstr(resp_text(c), "Content-Length: 27\r\n"));
    httpd_serve(c = get(0, "/debug/pprof/cmdline"));
    assert_string_equal(body(c), "pprof.http=6060  udpsh.key=<redacted> quiet\n");
    httpd_serve(c = get(0, "/"));
    assert_status(c, 302);
    assert_non_null(strstr(resp_text(c), "\r\nLocation: /debug/pprof/\r\n"));
    httpd_serve(c = get(0, "/debug/pprof/heap"));
    assert_status(c, 404);
    assert_int_equal(answered_count, 5);
    assert_int_equal(takes, 0);
}

static void test_the_profile_answers_as_go_does(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/pprof/profile?seconds=5");
    httpd_serve(c);
    assert_int_equal(seconds_asked, 5);
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "Content-Type: application/octet-stream\r\n"));
    assert_non_null(strstr(resp_text(c), "Content-Disposition: attachment; filename=\"profile\"\r\n"));
    assert_string_equal(body(c), "PPROFDATA");
    httpd_serve(c = get(0, "/debug/pprof/profile"));
    assert_int_equal(seconds_asked, PPROF_SECONDS_DEFAULT);
    httpd_serve(c = get(0, "/debug/pprof/profile?seconds=%33%30%30"));
    assert_int_equal(seconds_asked, 300);
    assert_int_equal(takes, 3);
}

static void test_bad_seconds_are_400_without_a_profile(void **state)
{
    (void)state;
    const char *bad[] = { "0", "301", "abc", "", "5x", "-1", "99999999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[80];
        snprintf(path, sizeof path, "/debug/pprof/profile?seconds=%s", bad[i]);
        struct httpd_conn *c = get(0, path);
        httpd_serve(c);
        assert_status(c, 400);
        assert_string_equal(body(c), "seconds must be a whole number 1..300\n");
    }
    assert_int_equal(takes, 0);
}

static void test_each_result_has_its_answer(void **state)
{
    (void)state;
    struct httpd_conn *c;
    result = PPROF_BUSY;
    httpd_serve(c = get(0, "/debug/pprof/profile?seconds=1"));
    assert_status(c, 429);
    assert_string_equal(body(c), "busy: the console's profile holds the profiler\n");
    assert_non_null(strstr(resp_text(c), "\r\nRetry-After: "));
    result = PPROF_NO_MEMORY;
    httpd_serve(c = get(0, "/debug/pprof/profile?seconds=1"));
    assert_status(c, 503);
    assert_string_equal(body(c), "out of memory\n");
}

/* While the profile runs: a page, a second profile and a 404 wait in the queue. */
static void queue_three(void)
{
    assert_true(httpd_queue_push(get(1, "/debug/pprof/cpus")));
    assert_true(httpd_queue_push(get(2, "/debug/pprof/profile?seconds=1")));
    assert_true(httpd_queue_push(get(3, "/nowhere")));
    fake_time_ns += 6800000000ll; /* 6.8 s into a 10 s window: 3.2 s left */
}

static void test_the_queue_is_served_while_a_profile_runs(void **state)
{
    (void)state;
    between_hooks = queue_three;
    struct httpd_conn *c = get(0, "/debug/pprof/profile?seconds=10");
    httpd_serve(c);
    assert_int_equal(answered_count, 4);
    assert_ptr_equal(answered[0], &conns[1]);
    assert_status(&conns[1], 200);
    assert_string_equal(body(&conns[1]), "CPU APIC ONLINE TICKS BUSY\n");
    assert_ptr_equal(answered[1], &conns[2]);
    assert_status(&conns[2], 429);
    assert_non_null(strstr(resp_text(&conns[2]), "\r\nRetry-After: 4\r\n"));
    assert_string_equal(body(&conns[2]), "a profile is running: try again in 4 s\n");
    assert_ptr_equal(answered[2], &conns[3]);
    assert_status(&conns[3], 404);
    assert_ptr_equal(answered[3], c); /* the profile itself, last */
    assert_status(c, 200);
    assert_int_equal(takes, 1);
}

static void client_goes(void)
{
    atomic_store(&conns[0].gone, true);
}

static void test_a_client_that_goes_ends_its_profile(void **state)
{
    (void)state;
    hooks = 100;
    between_hooks = client_goes;
    struct httpd_conn *c = get(0, "/debug/pprof/profile?seconds=30");
    httpd_serve(c);
    assert_int_equal(hooks_run, 0); /* the first hook said stop */
    assert_int_equal(answered_count, 1);
    assert_null(c->resp.data); /* nothing to send */
}

static void test_the_queue_holds_four(void **state)
{
    (void)state;
    for (unsigned i = 0; i < HTTPD_QUEUE; i++)
        assert_true(httpd_queue_push(get(i, "/")));
    assert_false(httpd_queue_push(get(4, "/")));
    for (unsigned i = 0; i < HTTPD_QUEUE; i++)
        assert_ptr_equal(httpd_queue_pop(), &conns[i]);
    assert_null(httpd_queue_pop());
}

static void test_a_request_that_waited_too_long_is_503(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/pprof/");
    fake_time_ns += (int64_t)(PPROF_SECONDS_MAX + HTTPD_WAIT_SLACK_S) * 1000000000 + 1;
    httpd_serve(c);
    assert_status(c, 503);
    c = get(0, "/debug/pprof/");
    fake_time_ns += (int64_t)(PPROF_SECONDS_MAX + HTTPD_WAIT_SLACK_S) * 1000000000;
    httpd_serve(c);
    assert_status(c, 200);
}

static int teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 8; i++) {
        free(conns[i].resp.data);
        conns[i].resp.data = 0;
    }
    return 0;
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_pages_and_redirect_and_404, test_the_profile_answers_as_go_does,
               test_bad_seconds_are_400_without_a_profile, test_each_result_has_its_answer,
               test_the_queue_is_served_while_a_profile_runs, test_a_client_that_goes_ends_its_profile,
               test_the_queue_holds_four, test_a_request_that_waited_too_long_is_503)
