/* kernel/httpd/httpd_profiles.c: the pprof.http= server's routes that take no profiler -- every task now as Go's
 * goroutine profile (/debug/pprof/goroutine: pprof, or ?debug=1 the counts as text, ?debug=2 every task as `tasks`
 * prints it), where tasks blocked as Go's block profile (/debug/pprof/block) and where CPUs spun on spinlocks as
 * Go's mutex profile (/debug/pprof/mutex) -- those two since boot, or ?seconds=N, the difference of two snapshots
 * N seconds apart, as pprof or ?debug=1 Go's text -- and who holds the heap as Go's heap and allocs profiles
 * (/debug/pprof/heap and /debug/pprof/allocs: pprof, or ?debug=1 Go's text), all the profiler's snapshots
 * (kernel/profiler/pprof.h). None claims the profiler, so none waits for a profile nor holds one up: a goroutine
 * dump, a heap profile or a block or mutex profile since boot is made and answered in the worker. A window sleeps
 * between its two snapshots, so it runs in a task of its own, one at a time for each profile (a second gets 429
 * with its one busy line and the seconds left), and answers its request when it is done -- or sends nothing once
 * its client has gone. */
#include "kernel/httpd/httpd_conn.h"

#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/profiler/pprof.h"
#include "kernel/task.h"

static void text(struct httpd_response *out, int status, const char *line)
{
    httpd_response_text(out, status, 0, line);
}

/* What a snapshot's result becomes: a profile named name, text, or 503. The body is given back either way. */
static void answer(struct httpd_response *out, int status, struct pprof_body *body, const char *name, bool is_text)
{
    if (status == PPROF_OK && is_text) {
        if (!httpd_response_make(out, 200, "text/plain; charset=utf-8", 0, body->data, body->len))
            text(out, 503, "out of memory");
    } else if (status == PPROF_OK) {
        httpd_response_profile(out, name, body);
    } else {
        text(out, 503, "out of memory");
    }
    pprof_body_free(body);
}

/* ---- /debug/pprof/goroutine ------------------------------------------------------------------------------ */

/* ?debug=N: 0 (absent too), 1 or 2; -1 (out answered 400) for anything else. */
static int debug_level(const struct http_request *req, struct httpd_response *out)
{
    char value[8];
    int found = http_request_query(req, "debug", value, sizeof value);
    uint64_t n = 0;
    if (found != 0 && (found < 0 || !parse_u64_range(value, 0, 2, &n))) {
        text(out, 400, "debug must be 0, 1 or 2");
        return -1;
    }
    return (int)n;
}

bool httpd_goroutine(struct httpd_conn *c, struct httpd_response *out)
{
    int debug = debug_level(&c->req, out);
    if (debug < 0)
        return false;
    struct pprof_body body;
    answer(out, pprof_goroutine(debug, &body), &body, "goroutine", debug > 0);
    return false;
}

/* ---- /debug/pprof/heap, /debug/pprof/allocs ---------------------------------------------------------------- */

/* Go's two views of one table: ?debug=1 (or 2) the legacy text; ?gc=1, which asks Go to collect first, is accepted
 * and has nothing to do (kfree is immediate). */
static bool heap_route(struct httpd_conn *c, struct httpd_response *out, bool allocs)
{
    int debug = debug_level(&c->req, out);
    if (debug < 0)
        return false;
    struct pprof_body body;
    answer(out, pprof_heap(allocs, debug, &body), &body, allocs ? "allocs" : "heap", debug > 0);
    return false;
}

bool httpd_heap(struct httpd_conn *c, struct httpd_response *out) { return heap_route(c, out, false); }
bool httpd_allocs(struct httpd_conn *c, struct httpd_response *out) { return heap_route(c, out, true); }

/* ---- /debug/pprof/block and /debug/pprof/mutex -------------------------------------------------------------- */

/* One profile of a block table and its one window at a time: its request, its first snapshot and when it ends;
 * in use from its start until its task has answered. Each route has its own, so a scraper's block window and its
 * mutex window run side by side. */
struct delays_route {
    const char *name; /* the profile's: its file name, its window task's, its busy line's */
    enum pprof_delays which;
    struct httpd_conn *c;
    struct pprof_delays_window w;
    uint32_t seconds;
    int64_t until_ns;
    atomic_bool windowing;
};

static struct delays_route block_route = { .name = "block", .which = PPROF_BLOCK };
static struct delays_route mutex_route = { .name = "mutex", .which = PPROF_MUTEX };

static void delays_window_task(void *arg)
{
    struct delays_route *route = arg;
    struct httpd_conn *c = route->c;
    /* a second at a time, so a client that went away ends it within one */
    bool gone = false;
    for (int64_t left; !gone && (left = route->until_ns - time_ns()) > 0;) {
        task_sleep_ms(left > 1000000000 ? 1000 : (uint32_t)((left + 999999) / 1000000));
        gone = atomic_load(&c->gone);
    }
    struct pprof_body body;
    bool text = route->w.text;
    int status = pprof_delays_end(&route->w, gone, &body);
    struct httpd_response out = { 0, 0, 0 };
    if (status != PPROF_CANCELLED)
        answer(&out, status, &body, route->name, text); /* cancelled: nothing to send */
    atomic_store(&route->windowing, false);
    httpd_hand_back(c, &out);
    task_exit();
}

/* 429 while another window of the same profile runs: its one busy line and the seconds it has left. */
static void delays_busy(const struct delays_route *route, struct httpd_response *out)
{
    int64_t left_ns = route->until_ns - time_ns();
    uint32_t left = left_ns > 0 ? (uint32_t)((left_ns + 999999999) / 1000000000) : 0;
    char line[96];
    ksnprintf(line, sizeof line, "%s: busy: a %s profile (/debug/pprof/%s?seconds=%u), %u s left", route->name,
              route->name, route->name, route->seconds, left);
    httpd_busy(out, line, left);
}

static bool delays(struct delays_route *route, struct httpd_conn *c, struct httpd_response *out)
{
    uint32_t seconds;
    int given = httpd_query_seconds(&c->req, &seconds, out);
    int debug = given < 0 ? -1 : debug_level(&c->req, out);
    if (debug < 0)
        return false;
    struct pprof_body body;
    if (!given) {
        answer(out, pprof_delays(route->which, debug > 0, &body), &body, route->name, debug > 0);
        return false;
    }
    bool idle = false;
    if (!atomic_compare_exchange_strong(&route->windowing, &idle, true)) {
        delays_busy(route, out);
        return false;
    }
    route->c = c;
    route->seconds = seconds;
    if (pprof_delays_begin(&route->w, route->which, debug > 0) == PPROF_OK) {
        route->until_ns = route->w.earlier.taken_ns + (int64_t)seconds * 1000000000;
        if (task_spawn(route->name, delays_window_task, route, -1))
            return true;
        pprof_delays_end(&route->w, true, &body);
    }
    atomic_store(&route->windowing, false);
    text(out, 503, "out of memory");
    return false;
}

bool httpd_block(struct httpd_conn *c, struct httpd_response *out) { return delays(&block_route, c, out); }

bool httpd_mutex(struct httpd_conn *c, struct httpd_response *out) { return delays(&mutex_route, c, out); }
