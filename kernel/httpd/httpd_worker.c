/* kernel/httpd/httpd_worker.c: the pprof.http= server's one worker task -- takes complete requests off the queue
 * the network task fills (kernel/httpd/httpd_conn.h), routes them through one table and builds each response on
 * the heap. A profile -- the CPUs' (/debug/pprof/profile) or every task's wall time (/debug/fgprof) -- is started
 * (pprof_profile_begin) in a task of its own, which answers its request when it is done, so the worker is never
 * held by one: it goes on answering pages, and another profile of either kind gets 429 with the session's busy
 * line and the seconds its window has left; a flame graph (/debug/flamegraph, kernel/httpd/httpd_flame.c) is
 * one of them, started through the same door. One profile runs at a time (`profiling`); otherwise one request is
 * worked on at a time, so nothing here needs a lock but the queue's. The task dump's and the block table's
 * routes are kernel/httpd/httpd_profiles.c's. */
#include "kernel/httpd/httpd_conn.h"

#include "hal/cpu.h"
#include "hal/spinlock.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/log.h"
#include "kernel/profiler/pprof.h"
#include "kernel/profiler/session.h"
#include "kernel/task.h"

static spinlock_t queue_lock = SPINLOCK_INIT;
static struct httpd_conn *queue[HTTPD_QUEUE];
static unsigned queue_head, queue_tail; /* under queue_lock */
static struct task *worker;

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

int httpd_query_seconds(const struct http_request *req, uint32_t *seconds, struct httpd_response *out)
{
    char value[16];
    int found = http_request_query(req, "seconds", value, sizeof value);
    uint64_t n = PPROF_SECONDS_DEFAULT;
    if (found != 0 && (found < 0 || !parse_u64_range(value, 1, PPROF_SECONDS_MAX, &n))) {
        char line[80];
        ksnprintf(line, sizeof line, "seconds must be a whole number 1..%u", PPROF_SECONDS_MAX);
        text(out, 400, 0, line);
        return -1;
    }
    *seconds = (uint32_t)n;
    return found;
}

/* The one HTTP profile at a time: its state, in use from its start until its done (in the profile's task). */
static struct pprof_profile http_profile;
static atomic_bool profiling;

static bool client_gone(void *arg)
{
    return atomic_load(&((struct httpd_conn *)arg)->gone);
}

void httpd_response_profile(struct httpd_response *out, const char *name, const struct pprof_body *body)
{
    char extra[80];
    ksnprintf(extra, sizeof extra, "Content-Disposition: attachment; filename=\"%s\"\r\n", name);
    if (!httpd_response_make(out, 200, "application/octet-stream", extra, body->data, body->len))
        text(out, 503, 0, "out of memory");
}

/* The profile's task, last thing: its answer (a flame graph's pprof kept for ?run=), then the slot free for the
 * next profile. */
static void profile_done(struct pprof_profile *p, int status, struct pprof_body *body)
{
    struct httpd_conn *c = p->arg;
    struct httpd_response out = { 0, 0, 0 };
    if (status == PPROF_OK && p->flame) {
        if (!httpd_response_make(&out, 200, "image/svg+xml; charset=utf-8", 0, body->data, body->len))
            text(&out, 503, 0, "out of memory");
        httpd_flame_keep(&p->kept, p->ask.run, p->kind);
    } else if (status == PPROF_OK) {
        httpd_response_profile(&out, p->kind == PPROF_WALL ? "fgprof" : "profile", body);
    } else if (status == PPROF_NO_MEMORY) {
        text(&out, 503, 0, "out of memory");
    }
    /* PPROF_CANCELLED: the client is gone, nothing to send */
    pprof_body_free(body);
    atomic_store(&profiling, false);
    httpd_hand_back(c, &out);
}

void httpd_busy(struct httpd_response *out, const char *line, uint32_t left)
{
    char extra[40];
    ksnprintf(extra, sizeof extra, "Retry-After: %u\r\n", left ? left : 5);
    text(out, 429, extra, line);
}

/* 429 with the session's busy line, and Retry-After the seconds its window has left (5 when it has no end). */
static void busy(struct httpd_response *out)
{
    char line[PROFILE_HOLDER_MAX + 40];
    uint32_t left = 0;
    char holder[PROFILE_HOLDER_MAX + 24];
    if (!profile_session_holder(holder, sizeof holder, &left))
        left = 0;
    profile_session_busy_line("profile", line, sizeof line);
    httpd_busy(out, line, left);
}

bool httpd_profile_held(struct httpd_response *out)
{
    if (!atomic_load(&profiling))
        return false;
    busy(out);
    return true;
}

bool httpd_profile_start(struct httpd_conn *c, struct httpd_response *out, enum pprof_kind kind, uint32_t seconds,
                         const struct pprof_flame_ask *ask)
{
    bool idle = false;
    if (!atomic_compare_exchange_strong(&profiling, &idle, true)) {
        busy(out);
        return false;
    }
    int r = ask ? pprof_flame_begin(&http_profile, kind, seconds, ask, client_gone, profile_done, c, 0, 0)
                : pprof_profile_begin(&http_profile, kind, seconds, client_gone, profile_done, c, 0, 0);
    if (r == PPROF_OK)
        return true;
    atomic_store(&profiling, false);
    if (r == PPROF_BUSY)
        busy(out);
    else
        text(out, 503, 0, "out of memory");
    return false;
}

/* A profile request of kind: started in its own task (true: it answers when done), or answered now in out. */
static bool profile(struct httpd_conn *c, struct httpd_response *out, enum pprof_kind kind)
{
    uint32_t seconds;
    if (httpd_query_seconds(&c->req, &seconds, out) < 0)
        return false;
    return httpd_profile_start(c, out, kind, seconds, 0);
}

static bool cpu_profile(struct httpd_conn *c, struct httpd_response *out)
{
    char run[4];
    if (http_request_query(&c->req, "run", run, sizeof run) != 0)
        return httpd_flame_kept(c, out); /* a flame graph's window, no new one */
    return profile(c, out, PPROF_CPU);
}

static bool wall_profile(struct httpd_conn *c, struct httpd_response *out)
{
    return profile(c, out, PPROF_WALL);
}

/* The routes that are profiles; every other path is a page's (kernel/httpd/pages.c) or 404. A route answers in
 * out (false), or hands the request to a task of its own that answers it when done (true). */
static const struct {
    const char *path;
    bool (*serve)(struct httpd_conn *c, struct httpd_response *out);
} routes[] = {
    { "/debug/pprof/profile", cpu_profile },
    { "/debug/fgprof", wall_profile },
    { "/debug/flamegraph", httpd_flamegraph },
    { "/debug/pprof/goroutine", httpd_goroutine },
    { "/debug/pprof/block", httpd_block },
    { "/debug/pprof/heap", httpd_heap },
    { "/debug/pprof/allocs", httpd_allocs },
    { "/debug/pprof/mutex", httpd_mutex },
};

/* The request's answer in out, or true when a task of the route's own answers it later. */
static bool answer(struct httpd_conn *c, struct httpd_response *out)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (http_request_path_is(&c->req, routes[i].path))
            return routes[i].serve(c, out);
    if (!httpd_page(&c->req, out))
        text(out, 404, 0, "not found: see /debug/pprof/");
    return false;
}

void httpd_hand_back(struct httpd_conn *c, struct httpd_response *out)
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

void httpd_serve(struct httpd_conn *c)
{
    atomic_store(&c->state, CONN_WORKING);
    struct httpd_response out = { 0, 0, 0 };
    if (!waited_too_long(c, &out) && answer(c, &out))
        return; /* its task answers when it is done */
    httpd_hand_back(c, &out);
}

static void worker_task(void *arg)
{
    (void)arg;
    for (;;) {
        struct httpd_conn *c = httpd_queue_pop();
        if (c)
            httpd_serve(c);
        else
            task_block(TASK_WAIT_NET);
    }
}

bool httpd_worker_start(void)
{
    worker = task_spawn("httpd", worker_task, 0, -1);
    return worker != 0;
}
