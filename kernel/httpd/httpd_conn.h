/* kernel/httpd/httpd_conn.h: what the server's two halves share -- the connection slots, the queue of complete
 * requests from the network task (kernel/httpd/httpd.c, the only one that touches lwIP) to the one worker task
 * (kernel/httpd/httpd_worker.c, which routes and answers), the response each answer is, and the counters.
 *
 * A slot's life: FREE -> READING (accepted; the network task feeds its parser) -> QUEUED (a complete request,
 * handed over through the queue) -> WORKING (the worker owns req and builds resp) -> SENDING (the network task
 * writes resp and closes) -> FREE. A refusal the network task makes itself (a bad head, a missing token, a full
 * queue, a timeout) goes from READING straight to SENDING. Only the network task frees a slot; a client that
 * goes away while its request is queued or worked on only marks the slot `gone`, and the slot is freed when the
 * worker has handed its response over. */
#ifndef KERNEL_HTTPD_HTTPD_CONN_H
#define KERNEL_HTTPD_HTTPD_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/httpd/http_request.h"
#include "kernel/httpd/http_token.h"
#include "kernel/profiler/pprof.h"

#define HTTPD_CONNS 8      /* as many as lwIP has TCP pcbs (MEMP_NUM_TCP_PCB, kernel/net/lwip/lwipopts.h) */
#define HTTPD_QUEUE 4      /* complete requests waiting for the worker; one more is answered 503 */
#define HTTPD_REQUEST_NS (5 * 1000000000ll)   /* accept to the head's end: longer is 408 */
#define HTTPD_STALL_NS (10 * 1000000000ll)    /* a response with no byte acknowledged for this long is aborted */
#define HTTPD_WAIT_SLACK_S 30                 /* queued: a profile's longest window and this, then 503 */

enum httpd_conn_state { CONN_FREE, CONN_READING, CONN_QUEUED, CONN_WORKING, CONN_SENDING };

struct httpd_response {
    uint8_t *data; /* kmalloc'd head and body; NULL: nothing to send, close (a cancelled profile) */
    size_t len;
    int status;
};

struct tcp_pcb;
struct httpd_conn {
    _Atomic int state;               /* enum httpd_conn_state */
    struct tcp_pcb *pcb;             /* the network task's; NULL once lwIP has freed it */
    uint32_t peer_ip;
    uint16_t peer_port;
    int64_t accepted_ns, queued_ns, progress_ns;
    atomic_bool gone;                /* the client closed (FIN) or reset: a profile for it is cancelled */
    atomic_bool answered;            /* QUEUED/WORKING: resp is ready for the network task */
    struct httpd_response resp;
    size_t written, acked;           /* SENDING: of resp.len */
    struct http_request req;
};

extern struct httpd_conn httpd_conns[HTTPD_CONNS];

/* Counters, by the network task alone (read without a lock by `net`). */
#define HTTPD_STATUS_KINDS 14
struct httpd_counters {
    uint64_t accepted, not_allowed, no_slot, cancelled, stalled, close_resets;
    uint64_t by_status[HTTPD_STATUS_KINDS]; /* indexed as httpd_status_codes */
};
extern struct httpd_counters httpd_counters;
extern const int httpd_status_codes[HTTPD_STATUS_KINDS];

/* ---- kernel/httpd/pages.c: responses and pages ---- */
/* A whole response: status line, Content-Type, Content-Length, Connection: close, extra (zero or more header
 * lines, each ending in \r\n, or NULL), the body. False when the heap has no room. */
bool httpd_response_make(struct httpd_response *out, int status, const char *content_type, const char *extra,
                         const void *body, size_t body_len);
/* A refusal or short answer: one line of text (a newline is added). */
bool httpd_response_text(struct httpd_response *out, int status, const char *extra, const char *line);
const char *httpd_status_text(int status);
/* The pages that are not profiles: index, lscpu, cpus, cmdline, "/" and anything else (404). True when the path
 * is one of them (out filled, or out->data NULL when the heap had no room). */
bool httpd_page(const struct http_request *req, struct httpd_response *out);

/* ---- kernel/httpd/httpd_worker.c ---- */
bool httpd_worker_start(void);
/* ?seconds=N: 1 (and *seconds) when given and 1..PPROF_SECONDS_MAX, 0 (and *seconds PPROF_SECONDS_DEFAULT) when
 * absent, -1 when bad (out answered 400). */
int httpd_query_seconds(const struct http_request *req, uint32_t *seconds, struct httpd_response *out);
/* 429 with one busy line and Retry-After left seconds (5 when 0: no end known). */
void httpd_busy(struct httpd_response *out, const char *line, uint32_t left);
/* 200 with a profile's body (Content-Disposition: attachment; filename="NAME"), or 503 out of memory. */
struct pprof_body;
void httpd_response_profile(struct httpd_response *out, const char *name, const struct pprof_body *body);
/* A request answered by a task of a route's own: its response, handed to the network task (the worker hands its
 * own answers over the same way). */
void httpd_hand_back(struct httpd_conn *c, struct httpd_response *out);
/* The network task hands a QUEUED slot over; false when HTTPD_QUEUE are waiting already. */
bool httpd_queue_push(struct httpd_conn *c);
/* The worker's side: the oldest waiting slot, or NULL. */
struct httpd_conn *httpd_queue_pop(void);
/* Answers one request taken off the queue (a profile runs here, serving the queue from its hook). */
void httpd_serve(struct httpd_conn *c);

/* A profile of kind over seconds -- a flame graph's when ask is not NULL -- started in its own task (true: it
 * answers when done), or refused in out: 429 while the one HTTP profile runs or the profiler is held, 503. */
bool httpd_profile_start(struct httpd_conn *c, struct httpd_response *out, enum pprof_kind kind, uint32_t seconds,
                         const struct pprof_flame_ask *ask);
/* True, with 429 and the busy line in out, while the one HTTP profile (of any kind) runs. */
bool httpd_profile_held(struct httpd_response *out);

/* ---- kernel/httpd/httpd_flame.c: the flame graph and the pprof of its window ---- */
/* /debug/flamegraph[?seconds=N][&kind=cpu|wall][&tag=key:value]: started as httpd_profile_start (true) or
 * refused in out (false). */
bool httpd_flamegraph(struct httpd_conn *c, struct httpd_response *out);
/* The profile's task, before it frees the slot: keeps body (taken: emptied) as run's pprof, freeing the last. */
void httpd_flame_keep(struct pprof_body *body, uint32_t run, enum pprof_kind kind);
/* /debug/pprof/profile?run=N: the kept pprof of flame graph N, 404 for another, 429 while a profile runs. */
bool httpd_flame_kept(struct httpd_conn *c, struct httpd_response *out);

/* ---- kernel/httpd/httpd_profiles.c: the routes that need no profiler ---- */
/* /debug/pprof/goroutine[?debug=1|2]: answered in out (false). */
bool httpd_goroutine(struct httpd_conn *c, struct httpd_response *out);
/* /debug/pprof/heap and /debug/pprof/allocs[?debug=1][&gc=1]: answered in out (false). */
bool httpd_heap(struct httpd_conn *c, struct httpd_response *out);
bool httpd_allocs(struct httpd_conn *c, struct httpd_response *out);
/* /debug/pprof/block and /debug/pprof/mutex [?seconds=N] [?debug=1]: since boot, answered in out (false); over N
 * seconds, in a task of its own that answers when the N seconds are over (true). */
bool httpd_block(struct httpd_conn *c, struct httpd_response *out);
bool httpd_mutex(struct httpd_conn *c, struct httpd_response *out);

/* ---- kernel/httpd/httpd.c ---- */
/* The worker's answer for c is ready (c->resp): tells the network task. */
void httpd_answered(struct httpd_conn *c);

#endif
