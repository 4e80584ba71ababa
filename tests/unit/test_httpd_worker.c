/* tests/unit/test_httpd_worker.c: kernel/httpd/httpd_worker.c and pages.c over a fake profiler -- routing (the
 * pages, 302, 404, the profile's seconds, /debug/fgprof a wall profile sharing the CPU profile's one slot and
 * busy line, the goroutine, block, mutex, heap and allocs routes handed to kernel/httpd/httpd_profiles.c, faked here), what each
 * result of a profile becomes (200 with its headers, 429 busy with the session's one busy line and Retry-After,
 * 503, nothing when cancelled), the worker answering by itself while a profile runs in its own task (pages,
 * another profile 429 with the seconds left), the client's going away ending the profile, the bounded queue and
 * the wait limit, the command line page redacting udpsh.key=; and kernel/httpd/httpd_flame.c's flame graph: its
 * query into the fake profiler's ask (kind, tag, the run's number), the same slot and busy line, 400 for a bad
 * query with nothing started, the SVG answered and its window's pprof kept for profile?run=N (404 for another
 * number, 429 while a profile runs). */
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
#include "kernel/profiler/session.h"
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
void task_block(enum task_wait why) { (void)why; }
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

/* The fake profiler: pprof_profile_begin answers result; when that is PPROF_OK the profile "runs" (its task is
 * the test: finish_profile ends it, calling done as the profile's task would). While it runs, the session's
 * holder names it; holder_text and holder_left say what holds the profiler otherwise (NULL: nothing known). */
static int result;
static unsigned begins;
static uint32_t seconds_asked;
static enum pprof_kind kind_asked;
static struct pprof_profile *running;
static const char *holder_text;
static uint32_t holder_left;

int pprof_profile_begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds, bool (*cancelled)(void *arg),
                        void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                        char *busy_text, size_t busy_cap)
{
    begins++;
    seconds_asked = seconds;
    kind_asked = kind;
    assert_null(running);
    if (result != PPROF_OK) {
        if (busy_text && busy_cap)
            profile_session_busy_line("profile", busy_text, busy_cap);
        return result;
    }
    p->kind = kind;
    p->flame = false;
    p->cancelled = cancelled;
    p->done = done;
    p->arg = arg;
    running = p;
    holder_text =
        kind == PPROF_WALL ? "an HTTP wall profile (/debug/fgprof)" : "an HTTP profile (/debug/pprof/profile)";
    holder_left = seconds;
    return PPROF_OK;
}

/* A flame graph is the same fake profile, asked with ask, holding as the real one does; its pprof is "PPROFKEPT". */
int pprof_flame_begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds,
                      const struct pprof_flame_ask *ask, bool (*cancelled)(void *arg),
                      void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                      char *busy_text, size_t busy_cap)
{
    int r = pprof_profile_begin(p, kind, seconds, cancelled, done, arg, busy_text, busy_cap);
    if (r == PPROF_OK) {
        p->flame = true;
        p->ask = *ask;
        holder_text = "an HTTP flame graph (/debug/flamegraph)";
    }
    return r;
}

/* The tag's parse is the profiler's (tests/unit/test_pprof_take.c tries its forms): here "key:value" with both
 * non-empty and no space, enough to see the route pass it on and refuse what it refuses. */
bool pprof_flame_tag(const char *key_colon_value, struct pprof_flame_ask *ask)
{
    const char *colon = strchr(key_colon_value, ':');
    if (!colon || colon == key_colon_value || !colon[1] || strchr(key_colon_value, ' '))
        return false;
    ask->filter.by_label = true;
    snprintf(ask->filter.label.key, sizeof ask->filter.label.key, "%.*s", (int)(colon - key_colon_value),
             key_colon_value);
    snprintf(ask->filter.label.value, sizeof ask->filter.label.value, "%s", colon + 1);
    snprintf(ask->tag, sizeof ask->tag, "%s=%s", ask->filter.label.key, ask->filter.label.value);
    return true;
}

/* The running profile's task ends with status: done, with a body for PPROF_OK. */
static void finish_profile(int status)
{
    assert_non_null(running);
    struct pprof_profile *p = running;
    running = NULL;
    holder_text = NULL;
    struct pprof_body body = { 0, 0, false };
    if (status == PPROF_OK) {
        body.data = (uint8_t *)strdup("PPROFDATA");
        body.len = 9;
        if (p->flame)
            p->kept = (struct pprof_body){ (uint8_t *)strdup("PPROFKEPT"), 9, false };
    }
    p->done(p, status, &body);
}

/* The session's holder line and busy line (kernel/profiler/session.c), over holder_text and holder_left. */
bool profile_session_holder(char *buf, size_t cap, uint32_t *seconds_left)
{
    if (!holder_text)
        return false;
    snprintf(buf, cap, "%s, %u s left", holder_text, holder_left);
    if (seconds_left)
        *seconds_left = holder_left;
    return true;
}

void profile_session_busy_line(const char *who, char *buf, size_t cap)
{
    char holder[128];
    if (profile_session_holder(holder, sizeof holder, NULL))
        snprintf(buf, cap, "%s: busy: %s", who, holder);
    else
        snprintf(buf, cap, "%s: busy", who);
}
void pprof_body_free(struct pprof_body *body) { free(body->data); }

/* The routes of kernel/httpd/httpd_profiles.c: each answers with one line naming itself and its query. */
static bool fake_route(struct httpd_conn *c, struct httpd_response *out, const char *name)
{
    char line[80], debug[8] = "-";
    http_request_query(&c->req, "debug", debug, sizeof debug);
    snprintf(line, sizeof line, "%s debug=%s", name, debug);
    httpd_response_text(out, 200, 0, line);
    return false;
}
bool httpd_goroutine(struct httpd_conn *c, struct httpd_response *out) { return fake_route(c, out, "goroutine"); }
bool httpd_block(struct httpd_conn *c, struct httpd_response *out) { return fake_route(c, out, "block"); }
bool httpd_mutex(struct httpd_conn *c, struct httpd_response *out) { return fake_route(c, out, "mutex"); }
bool httpd_heap(struct httpd_conn *c, struct httpd_response *out) { return fake_route(c, out, "heap"); }
bool httpd_allocs(struct httpd_conn *c, struct httpd_response *out) { return fake_route(c, out, "allocs"); }

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
    begins = 0;
    holder_text = NULL;
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
    /* the scrapers' other profiles are listed beside it, and the flame graph */
    static const char *const links[] = {
        "<a href=\"/debug/fgprof\">fgprof</a>", "<a href=\"goroutine\">goroutine</a>",
        "<a href=\"goroutine?debug=2\">", "<a href=\"block\">block</a>", "<a href=\"mutex\">mutex</a>",
        "<a href=\"mutex?debug=1\">?debug=1</a>", "<a href=\"heap\">heap</a>",
        "<a href=\"heap?debug=1\">?debug=1</a>", "<a href=\"allocs\">allocs</a>",
        "<a href=\"/debug/flamegraph?seconds=5\">flamegraph</a>",
    };
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (!strstr(body(c), links[i]))
            fail_msg("the index has no %s", links[i]);
    httpd_serve(c = get(0, "/debug/pprof/lscpu"));
    assert_status(c, 200);
    assert_string_equal(body(c), "lscpu: the console's lines\n");
    assert_non_null(strstr(resp_text(c), "Content-Length: 27\r\n"));
    httpd_serve(c = get(0, "/debug/pprof/cmdline"));
    assert_string_equal(body(c), "pprof.http=6060  udpsh.key=<redacted> quiet\n");
    httpd_serve(c = get(0, "/"));
    assert_status(c, 302);
    assert_non_null(strstr(resp_text(c), "\r\nLocation: /debug/pprof/\r\n"));
    httpd_serve(c = get(0, "/debug/pprof/threadcreate"));
    assert_status(c, 404);
    assert_int_equal(answered_count, 5);
    assert_int_equal(begins, 0);
}

/* Started, not answered: the profile's task answers when it is done. */
static void serve_profile(struct httpd_conn *c, uint32_t seconds)
{
    unsigned before = answered_count;
    httpd_serve(c);
    assert_int_equal(seconds_asked, seconds);
    assert_int_equal(answered_count, before);
    assert_ptr_equal(running->arg, c);
}

static void test_the_profile_answers_as_go_does(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/pprof/profile?seconds=5");
    serve_profile(c, 5);
    finish_profile(PPROF_OK);
    assert_int_equal(answered_count, 1);
    assert_ptr_equal(answered[0], c);
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "Content-Type: application/octet-stream\r\n"));
    assert_non_null(strstr(resp_text(c), "Content-Disposition: attachment; filename=\"profile\"\r\n"));
    assert_string_equal(body(c), "PPROFDATA");
    serve_profile(c = get(0, "/debug/pprof/profile"), PPROF_SECONDS_DEFAULT);
    finish_profile(PPROF_OK);
    serve_profile(c = get(0, "/debug/pprof/profile?seconds=%33%30%30"), 300);
    finish_profile(PPROF_OK);
    assert_int_equal(begins, 3);
    assert_int_equal(answered_count, 3);
    assert_int_equal(kind_asked, PPROF_CPU);
}

/* /debug/fgprof is the same profile of the wall kind, answered the same way under its own name; while it runs a CPU
 * profile gets the one busy line naming it (one profiler), and the other routes are the profiles file's. */
static void test_fgprof_is_a_wall_profile_in_the_one_slot(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/fgprof?seconds=2");
    serve_profile(c, 2);
    assert_int_equal(kind_asked, PPROF_WALL);
    holder_left = 2;
    httpd_serve(get(1, "/debug/pprof/profile?seconds=1"));
    assert_status(&conns[1], 429);
    assert_string_equal(body(&conns[1]), "profile: busy: an HTTP wall profile (/debug/fgprof), 2 s left\n");
    assert_non_null(strstr(resp_text(&conns[1]), "\r\nRetry-After: 2\r\n"));
    httpd_serve(get(2, "/debug/pprof/goroutine?debug=2"));
    assert_string_equal(body(&conns[2]), "goroutine debug=2\n");
    httpd_serve(get(3, "/debug/pprof/block"));
    assert_string_equal(body(&conns[3]), "block debug=-\n");
    httpd_serve(get(3, "/debug/pprof/mutex?debug=1"));
    assert_string_equal(body(&conns[3]), "mutex debug=1\n");
    httpd_serve(get(3, "/debug/pprof/heap?debug=1&gc=1"));
    assert_string_equal(body(&conns[3]), "heap debug=1\n");
    httpd_serve(get(3, "/debug/pprof/allocs"));
    assert_string_equal(body(&conns[3]), "allocs debug=-\n");
    assert_int_equal(begins, 1);
    finish_profile(PPROF_OK);
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "Content-Disposition: attachment; filename=\"fgprof\"\r\n"));
    assert_string_equal(body(c), "PPROFDATA");
    httpd_serve(c = get(0, "/debug/fgprof?seconds=301"));
    assert_status(c, 400);
    serve_profile(get(0, "/debug/fgprof"), PPROF_SECONDS_DEFAULT);
    finish_profile(PPROF_OK);
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
    assert_int_equal(begins, 0);
}

static void test_each_result_has_its_answer(void **state)
{
    (void)state;
    struct httpd_conn *c;
    /* the profiler held by another session: the one busy line, Retry-After its seconds left */
    result = PPROF_BUSY;
    holder_text = "profile 2000 ms from the console";
    holder_left = 2;
    httpd_serve(c = get(0, "/debug/pprof/profile?seconds=1"));
    assert_status(c, 429);
    assert_string_equal(body(c), "profile: busy: profile 2000 ms from the console, 2 s left\n");
    assert_non_null(strstr(resp_text(c), "\r\nRetry-After: 2\r\n"));
    /* held by a run nothing names: plain busy, and Retry-After 5 */
    holder_text = NULL;
    httpd_serve(c = get(0, "/debug/pprof/profile?seconds=1"));
    assert_status(c, 429);
    assert_string_equal(body(c), "profile: busy\n");
    assert_non_null(strstr(resp_text(c), "\r\nRetry-After: 5\r\n"));
    result = PPROF_NO_MEMORY;
    httpd_serve(c = get(0, "/debug/pprof/profile?seconds=1"));
    assert_status(c, 503);
    assert_string_equal(body(c), "out of memory\n");
    /* started, and out of memory when it came to encode */
    result = PPROF_OK;
    serve_profile(c = get(0, "/debug/pprof/profile?seconds=1"), 1);
    finish_profile(PPROF_NO_MEMORY);
    assert_status(c, 503);
    assert_string_equal(body(c), "out of memory\n");
}

/* While the profile runs the worker is free: a page, a second profile and a 404 are answered at once, by the
 * worker itself -- the second profile 429 with the one busy line and the seconds left -- and the profile last,
 * by its own task. */
static void test_the_worker_answers_while_a_profile_runs(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/pprof/profile?seconds=10");
    serve_profile(c, 10);
    holder_left = 4;
    httpd_serve(get(1, "/debug/pprof/cpus"));
    httpd_serve(get(2, "/debug/pprof/profile?seconds=1"));
    httpd_serve(get(3, "/nowhere"));
    assert_int_equal(answered_count, 3);
    assert_ptr_equal(answered[0], &conns[1]);
    assert_status(&conns[1], 200);
    assert_string_equal(body(&conns[1]), "CPU APIC ONLINE TICKS BUSY\n");
    assert_ptr_equal(answered[1], &conns[2]);
    assert_status(&conns[2], 429);
    assert_non_null(strstr(resp_text(&conns[2]), "\r\nRetry-After: 4\r\n"));
    assert_string_equal(body(&conns[2]), "profile: busy: an HTTP profile (/debug/pprof/profile), 4 s left\n");
    assert_ptr_equal(answered[2], &conns[3]);
    assert_status(&conns[3], 404);
    assert_int_equal(begins, 1); /* the second never reached the profiler: one HTTP profile at a time */
    finish_profile(PPROF_OK);
    assert_int_equal(answered_count, 4);
    assert_ptr_equal(answered[3], c); /* the profile itself, last */
    assert_status(c, 200);
    /* and the next one may start */
    serve_profile(get(4, "/debug/pprof/profile?seconds=2"), 2);
    finish_profile(PPROF_OK);
    assert_int_equal(begins, 2);
}

/* The profile asks, before each sleep of its window, whether its client is gone: once it is, the profile ends
 * with nothing to send. */
static void test_a_client_that_goes_ends_its_profile(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/pprof/profile?seconds=30");
    serve_profile(c, 30);
    assert_false(running->cancelled(running->arg));
    atomic_store(&c->gone, true);
    assert_true(running->cancelled(running->arg));
    finish_profile(PPROF_CANCELLED);
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
    if (running)
        finish_profile(PPROF_CANCELLED); /* a test that failed with its profile running */
    for (unsigned i = 0; i < 8; i++) {
        free(conns[i].resp.data);
        conns[i].resp.data = 0;
    }
    return 0;
}

/* /debug/flamegraph: a flame graph of the kind and tag asked in the one profile slot, numbered; answered as SVG,
 * and its window's pprof served by that number until the next flame graph replaces it. */
static void test_the_flamegraph_is_svg_and_keeps_its_window(void **state)
{
    (void)state;
    struct httpd_conn *c = get(0, "/debug/flamegraph?seconds=2&kind=wall&tag=job:a");
    serve_profile(c, 2);
    assert_true(running->flame);
    assert_int_equal(kind_asked, PPROF_WALL);
    assert_true(running->ask.filter.by_label);
    assert_string_equal(running->ask.filter.label.key, "job");
    assert_string_equal(running->ask.filter.label.value, "a");
    assert_string_equal(running->ask.tag, "job=a");
    uint32_t run = running->ask.run;
    assert_true(run >= 1);
    holder_left = 2;
    httpd_serve(get(1, "/debug/pprof/profile?seconds=1"));
    assert_status(&conns[1], 429);
    assert_string_equal(body(&conns[1]), "profile: busy: an HTTP flame graph (/debug/flamegraph), 2 s left\n");
    char path[64];
    snprintf(path, sizeof path, "/debug/pprof/profile?run=%u", run);
    httpd_serve(get(1, path));
    assert_status(&conns[1], 429); /* the kept body is the running profile's to replace */
    finish_profile(PPROF_OK);
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "Content-Type: image/svg+xml; charset=utf-8\r\n"));
    assert_string_equal(body(c), "PPROFDATA");
    httpd_serve(c = get(1, path));
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "filename=\"fgprof\""));
    assert_string_equal(body(c), "PPROFKEPT");
    /* a refusal does not use a number up; the next flame graph takes the next and replaces the kept pprof */
    result = PPROF_BUSY;
    httpd_serve(c = get(0, "/debug/flamegraph"));
    assert_status(c, 429);
    result = PPROF_OK;
    serve_profile(get(0, "/debug/flamegraph"), PPROF_SECONDS_DEFAULT);
    assert_int_equal(running->ask.run, run + 1);
    assert_int_equal(kind_asked, PPROF_CPU);
    assert_false(running->ask.filter.by_label);
    assert_string_equal(running->ask.tag, "");
    finish_profile(PPROF_OK);
    httpd_serve(c = get(1, path));
    assert_status(c, 404);
    char line[96];
    snprintf(line, sizeof line, "run %u is not kept: only the last flame graph's pprof is (run %u)\n", run, run + 1);
    assert_string_equal(body(c), line);
    snprintf(path, sizeof path, "/debug/pprof/profile?run=%u", run + 1);
    httpd_serve(c = get(1, path));
    assert_status(c, 200);
    assert_non_null(strstr(resp_text(c), "filename=\"profile\""));
    assert_int_equal(begins, 3);
}

/* Every bad query is one line of 400, and starts nothing. */
static void test_bad_flamegraph_queries_are_400_and_start_nothing(void **state)
{
    (void)state;
    static const struct {
        const char *path, *line;
    } bad[] = {
        { "/debug/flamegraph?seconds=0", "seconds must be a whole number 1..300\n" },
        { "/debug/flamegraph?kind=heap", "kind must be cpu or wall\n" },
        { "/debug/flamegraph?kind=cpuwall", "kind must be cpu or wall\n" },
        { "/debug/flamegraph?tag=job", "tag must be key:value, a label pair as the console's profile key=value "
                                       "filter takes\n" },
        { "/debug/flamegraph?tag=job:a%20b", "tag must be key:value, a label pair as the console's profile "
                                             "key=value filter takes\n" },
        { "/debug/flamegraph?tag=:a", "tag must be key:value, a label pair as the console's profile key=value "
                                      "filter takes\n" },
        { "/debug/pprof/profile?run=x", "run must be a flame graph's number 1..4294967295\n" },
        { "/debug/pprof/profile?run=0", "run must be a flame graph's number 1..4294967295\n" },
        { "/debug/pprof/profile?run=99999999999", "run must be a flame graph's number 1..4294967295\n" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct httpd_conn *c = get(0, bad[i].path);
        httpd_serve(c);
        assert_status(c, 400);
        assert_string_equal(body(c), bad[i].line);
    }
    assert_int_equal(begins, 0);
    assert_null(running);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_pages_and_redirect_and_404, test_the_profile_answers_as_go_does,
               test_fgprof_is_a_wall_profile_in_the_one_slot,
               test_bad_seconds_are_400_without_a_profile, test_each_result_has_its_answer,
               test_the_worker_answers_while_a_profile_runs, test_a_client_that_goes_ends_its_profile,
               test_the_queue_holds_four, test_a_request_that_waited_too_long_is_503,
               test_the_flamegraph_is_svg_and_keeps_its_window, test_bad_flamegraph_queries_are_400_and_start_nothing)
