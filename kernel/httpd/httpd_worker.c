/* kernel/httpd/httpd_worker.c: the pprof.http= server's one worker task -- takes complete requests off the queue
 * the network task fills (kernel/httpd/httpd_conn.h), routes them and builds each response on the heap. A
 * profile runs here (pprof_profile_take); every HTTPD_HOOK_MS of its window the worker serves what else waits:
 * pages at once, another profile 429 with the seconds left. One request is worked on at a time, so nothing here
 * needs a lock but the queue's. */
#include "kernel/httpd/httpd_conn.h"

#include "hal/cpu.h"
#include "hal/spinlock.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/log.h"
#include "kernel/profiler/pprof.h"
#include "kernel/task.h"

static spinlock_t queue_lock = SPINLOCK_INIT;
static struct httpd_conn *queue[HTTPD_QUEUE];
static unsigned queue_head, queue_tail; /* under queue_lock */
static struct task *worker;
static int64_t profile_ends_ns; /* while a profile runs: when its window ends (the worker's alone) */

bool httpd_queue_push(struct httpd_conn *c)
{
    unsigned long flags = spin_lock_irqsave(&queue_lock);
    bool ok = queue_head - queue_tail < HTTPD_QUEUE;
    if (ok)
        queue[queue_head++ % HTTPD_QUEUE] = c;
    spin_unlock_irqrestore(&queue_lock, flags);
    if (ok)
        task_wake(worker);
    return ok;
}

struct httpd_conn *httpd_queue_pop(void)
{
    struct httpd_conn *c = 0;
    unsigned long flags = spin_lock_irqsave(&queue_lock);
    if (queue_head != queue_tail)
        c = queue[queue_tail++ % HTTPD_QUEUE];
    spin_unlock_irqrestore(&queue_lock, flags);
    return c;
}

static void text(struct httpd_response *out, int status, const char *extra, const char *line)
{
    httpd_response_text(out, status, extra, line);
}

/* The profile's seconds from ?seconds=N; false (out answered 400) when N is not 1..PPROF_SECONDS_MAX. */
static bool profile_seconds(const struct http_request *req, uint32_t *seconds, struct httpd_response *out)
{
    char value[16];
    int found = http_request_query(req, "seconds", value, sizeof value);
    uint64_t n = PPROF_SECONDS_DEFAULT;
    if (found != 0 && (found < 0 || !parse_u64_range(value, 1, PPROF_SECONDS_MAX, &n))) {
        char line[80];
        ksnprintf(line, sizeof line, "seconds must be a whole number 1..%u", PPROF_SECONDS_MAX);
        text(out, 400, 0, line);
        return false;
    }
    *seconds = (uint32_t)n;
    return true;
}

static void serve_while_profiling(struct httpd_conn *c);

/* The profile's hook: every drain of the window, serve the queue; end the profile when its client is gone. */
static bool profile_hook(void *arg)
{
    struct httpd_conn *self = arg;
    for (struct httpd_conn *c; (c = httpd_queue_pop());)
        serve_while_profiling(c);
    return atomic_load(&self->gone);
}

static void profile(struct httpd_conn *c, struct httpd_response *out)
{
    uint32_t seconds;
    if (!profile_seconds(&c->req, &seconds, out))
        return;
    profile_ends_ns = time_ns() + (int64_t)seconds * 1000000000;
    struct pprof_body body;
    char busy[96];
    busy[0] = 0;
    int r = pprof_profile_take(seconds, profile_hook, c, &body, busy, sizeof busy);
    profile_ends_ns = 0;
    switch (r) {
    case PPROF_OK:
        if (!httpd_response_make(out, 200, "application/octet-stream",
                                 "Content-Disposition: attachment; filename=\"profile\"\r\n", body.data, body.len))
            text(out, 503, 0, "out of memory");
        pprof_body_free(&body);
        return;
    case PPROF_BUSY:
        text(out, 429, "Retry-After: 5\r\n", busy[0] ? busy : "the profiler is busy");
        return;
    case PPROF_CANCELLED:
        out->data = 0; /* the client is gone: nothing to send */
        out->len = 0;
        return;
    default:
        text(out, 503, 0, "out of memory");
        return;
    }
}

/* What one request gets, but a profile's (profile() does those). */
static void answer(struct httpd_conn *c, struct httpd_response *out)
{
    if (!httpd_page(&c->req, out))
        text(out, 404, 0, "not found: see /debug/pprof/");
}

static void hand_back(struct httpd_conn *c, struct httpd_response *out)
{
    c->resp = *out;
    httpd_answered(c);
}

static bool waited_too_long(struct httpd_conn *c, struct httpd_response *out)
{
    if (time_ns() - c->queued_ns <= (int64_t)(PPROF_SECONDS_MAX + HTTPD_WAIT_SLACK_S) * 1000000000)
        return false;
    text(out, 503, 0, "waited too long in the queue");
    return true;
}

/* A request taken off the queue while a profile runs: pages as ever, another profile 429 with the seconds left. */
static void serve_while_profiling(struct httpd_conn *c)
{
    atomic_store(&c->state, CONN_WORKING);
    struct httpd_response out = { 0, 0, 0 };
    if (!waited_too_long(c, &out)) {
        if (http_request_path_is(&c->req, "/debug/pprof/profile")) {
            int64_t left = profile_ends_ns - time_ns();
            unsigned seconds = left > 0 ? (unsigned)((left + 999999999) / 1000000000) : 1;
            char extra[40], line[80];
            ksnprintf(extra, sizeof extra, "Retry-After: %u\r\n", seconds);
            ksnprintf(line, sizeof line, "a profile is running: try again in %u s", seconds);
            text(&out, 429, extra, line);
        } else {
            answer(c, &out);
        }
    }
    hand_back(c, &out);
}

void httpd_serve(struct httpd_conn *c)
{
    atomic_store(&c->state, CONN_WORKING);
    struct httpd_response out = { 0, 0, 0 };
    if (!waited_too_long(c, &out)) {
        if (http_request_path_is(&c->req, "/debug/pprof/profile"))
            profile(c, &out);
        else
            answer(c, &out);
    }
    hand_back(c, &out);
}

static void worker_task(void *arg)
{
    (void)arg;
    for (;;) {
        struct httpd_conn *c = httpd_queue_pop();
        if (c)
            httpd_serve(c);
        else
            task_block();
    }
}

bool httpd_worker_start(void)
{
    worker = task_spawn("httpd", worker_task, 0, -1);
    return worker != 0;
}
