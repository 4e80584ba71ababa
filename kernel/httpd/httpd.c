/* kernel/httpd/httpd.c: the pprof.http= server's TCP side, in the network task (the only caller of lwIP,
 * kernel/net/net.c, which runs httpd_pass on each of its passes): the listening pcb, accepting (the allowlist
 * asked again), reading each connection's request head into its parser, the refusals made here (a bad head, a
 * missing or wrong token, a full queue, a head not complete within HTTPD_REQUEST_NS), handing complete requests
 * to the worker (kernel/httpd/httpd_worker.c), and sending every response from its heap buffer as the send
 * buffer allows, then closing -- and resetting a close whose FIN the client leaves unacknowledged
 * (kernel/httpd/http_closing.h). Every path that ends a connection frees its response. */
#include "kernel/httpd/httpd.h"
#include "kernel/httpd/httpd_conn.h"
#include "kernel/httpd/http_closing.h"

#include "hal/cpu.h"
#include "kernel/cmdline.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "kernel/log.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/boot_secret.h"
#include "kernel/net/keyed_service.h"
#include "kernel/net/lwip/lwip_hooks.h"
#include "kernel/net/net.h"
#include "kernel/net/net_report.h"
#include "kernel/profiler/session.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

struct httpd_conn httpd_conns[HTTPD_CONNS];
struct httpd_counters httpd_counters;
const int httpd_status_codes[HTTPD_STATUS_KINDS] = { 200, 302, 400, 401, 404, 405, 408, 414, 421, 429, 431, 503,
                                                             505, 0 };

static uint16_t port;          /* 0: off */
static bool keyed;
static char token[HTTP_TOKEN_HEX + 1];
static struct http_host_names host_names; /* pprof.host=: the DNS names a request's Host may give */
static struct tcp_pcb *listener;
static bool listen_tried;
static bool aborted; /* finish() reset a pcb: a callback that called it must return ERR_ABRT to lwIP */
static struct http_closing closing; /* the connections closed gracefully, until lwIP is done with them */

static void count_status(int status)
{
    unsigned i = 0;
    while (i < HTTPD_STATUS_KINDS - 1 && httpd_status_codes[i] != status)
        i++;
    __atomic_fetch_add(&httpd_counters.by_status[i], 1, __ATOMIC_RELAXED); /* the last: any other */
}

static void detach(struct tcp_pcb *pcb)
{
    tcp_arg(pcb, 0);
    tcp_recv(pcb, 0);
    tcp_sent(pcb, 0);
    tcp_err(pcb, 0);
}

/* Ends c: its pcb closed gracefully (abort: reset), its response freed, the slot free again. */
static void finish(struct httpd_conn *c, bool abort)
{
    if (c->pcb) {
        detach(c->pcb);
        if (abort || tcp_close(c->pcb) != ERR_OK) {
            tcp_abort(c->pcb);
            aborted = true;
        } else {
            http_closing_remember(&closing, c->pcb, c->peer_ip, c->peer_port, time_ns());
        }
        c->pcb = 0;
    }
    kfree(c->resp.data);
    c->resp = (struct httpd_response){ 0, 0, 0 };
    atomic_store(&c->state, CONN_FREE);
}

/* Writes what the send buffer takes; closes when everything is acknowledged. False when c was ended. */
static bool send_more(struct httpd_conn *c)
{
    if (!c->pcb) {
        finish(c, true);
        return false;
    }
    while (c->written < c->resp.len) {
        size_t n = c->resp.len - c->written;
        size_t room = tcp_sndbuf(c->pcb);
        if (n > room)
            n = room;
        if (n > 0xffff)
            n = 0xffff;
        if (n == 0 || tcp_write(c->pcb, c->resp.data + c->written, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break; /* no room (or no segments) now: tcp_sent or the next pass tries again */
        c->written += n;
    }
    tcp_output(c->pcb);
    if (c->acked >= c->resp.len) {
        finish(c, false);
        return false;
    }
    return true;
}

/* Starts sending c->resp (made by the network task or the worker); no response: just close. */
static void start_sending(struct httpd_conn *c)
{
    atomic_store(&c->state, CONN_SENDING);
    c->written = c->acked = 0;
    c->progress_ns = time_ns();
    if (!c->resp.data) {
        finish(c, c->pcb && atomic_load(&c->gone));
        return;
    }
    count_status(c->resp.status);
    send_more(c);
}

/* The network task's own answer to a connection still READING. */
static void answer_now(struct httpd_conn *c, int status, const char *extra, const char *line)
{
    httpd_response_text(&c->resp, status, extra, line);
    start_sending(c);
}

void httpd_answered(struct httpd_conn *c)
{
    atomic_store_explicit(&c->answered, true, memory_order_release);
    net_kick();
}

/* A complete head: its Host, the token, then the queue. The Host first: a rebinding page holds no token, and
 * its requests should learn nothing, not even whether a token is asked for. */
static void request_complete(struct httpd_conn *c)
{
    if (c->req.has_host && !http_host_acceptable(c->req.host, c->req.host_len, &host_names)) {
        char line[HTTP_REASON_MAX + 40];
        ksnprintf(line, sizeof line, "Host '%.40s' is not this server's: use its address, or a name in pprof.host=",
                  c->req.host);
        answer_now(c, 421, 0, line);
        return;
    }
    if (keyed && !(c->req.bearer_present && !c->req.bearer_too_long && http_token_matches(token, c->req.bearer))) {
        answer_now(c, 401, "WWW-Authenticate: Bearer\r\n",
                   c->req.bearer_present ? "wrong bearer token" : "a bearer token is required (udpsh.key= is set)");
        return;
    }
    c->queued_ns = time_ns();
    atomic_store(&c->answered, false);
    atomic_store(&c->state, CONN_QUEUED);
    if (!httpd_queue_push(c)) {
        atomic_store(&c->state, CONN_READING);
        answer_now(c, 503, 0, "busy: the queue of requests is full");
    }
}

static err_t received(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct httpd_conn *c = arg;
    (void)err;
    aborted = false;
    if (!p) { /* the client closed its side: before its request ended, nothing is answered */
        atomic_store(&c->gone, true);
        if (atomic_load(&c->state) == CONN_READING)
            finish(c, false);
        return aborted ? ERR_ABRT : ERR_OK;
    }
    tcp_recved(pcb, p->tot_len);
    if (atomic_load(&c->state) == CONN_READING) {
        for (struct pbuf *q = p; q && c->req.state == HTTP_PARSE_MORE; q = q->next)
            http_request_feed(&c->req, q->payload, q->len, 0);
        pbuf_free(p);
        if (c->req.state == HTTP_PARSE_REFUSED)
            answer_now(c, c->req.status, c->req.status == 405 ? "Allow: GET\r\n" : 0, c->req.reason);
        else if (c->req.state == HTTP_PARSE_DONE)
            request_complete(c);
        return aborted ? ERR_ABRT : ERR_OK;
    }
    pbuf_free(p); /* what follows a complete head is not read: one request a connection */
    return ERR_OK;
}

static err_t sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)pcb;
    struct httpd_conn *c = arg;
    aborted = false;
    c->acked += len;
    c->progress_ns = time_ns();
    if (atomic_load(&c->state) == CONN_SENDING)
        send_more(c);
    return aborted ? ERR_ABRT : ERR_OK;
}

/* lwIP has freed the pcb (a reset, or its own give-up). */
static void failed(void *arg, err_t err)
{
    (void)err;
    struct httpd_conn *c = arg;
    c->pcb = 0;
    atomic_store(&c->gone, true);
    int state = atomic_load(&c->state);
    if (state == CONN_READING || state == CONN_SENDING)
        finish(c, true);
    /* QUEUED or WORKING: the worker still holds the request; the slot is freed when it answers. */
}

static err_t accepted(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    tcp_backlog_accepted(pcb);
    uint32_t ip = lwip_ntohl(ip4_addr_get_u32(&pcb->remote_ip));
    /* The hook at the door (kernel/net/lwip/lwip_hooks.c) already dropped strangers' SYNs; asked again in case the
     * allowlist's default, the local subnet, was not yet known when the SYN came. */
    if (!net_peer_permitted(ip)) {
        httpd_counters.not_allowed++;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    struct httpd_conn *c = 0;
    for (unsigned i = 0; i < HTTPD_CONNS && !c; i++)
        if (atomic_load(&httpd_conns[i].state) == CONN_FREE)
            c = &httpd_conns[i];
    if (!c) {
        httpd_counters.no_slot++;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    httpd_counters.accepted++;
    c->pcb = pcb;
    c->peer_ip = ip;
    c->peer_port = pcb->remote_port;
    c->accepted_ns = time_ns();
    c->resp = (struct httpd_response){ 0, 0, 0 };
    atomic_store(&c->gone, false);
    atomic_store(&c->answered, false);
    http_request_init(&c->req);
    atomic_store(&c->state, CONN_READING);
    tcp_arg(pcb, c);
    tcp_recv(pcb, received);
    tcp_sent(pcb, sent);
    tcp_err(pcb, failed);
    return ERR_OK;
}

static void start_listening(void)
{
    listen_tried = true;
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb || tcp_bind(pcb, IP_ANY_TYPE, port) != ERR_OK) {
        log_warn("httpd: cannot bind TCP port %u: server off", port);
        if (pcb)
            tcp_abort(pcb);
        return;
    }
    listener = tcp_listen_with_backlog(pcb, TCP_DEFAULT_LISTEN_BACKLOG);
    if (!listener) {
        log_warn("httpd: cannot listen on TCP port %u: server off", port);
        tcp_abort(pcb);
        return;
    }
    tcp_accept(listener, accepted);
}

/* Whether lwIP still holds e's pcb, for e's peer on our port, waiting for its FIN to be acknowledged. A pcb lwIP
 * freed and gave to another connection since fails on the peer or the state, so it is never touched. */
static bool still_closing(const struct http_closing_entry *e)
{
    for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (pcb == e->pcb)
            return pcb->local_port == port && pcb->remote_port == e->peer_port &&
                   lwip_ntohl(ip4_addr_get_u32(&pcb->remote_ip)) == e->peer_ip &&
                   (pcb->state == FIN_WAIT_1 || pcb->state == FIN_WAIT_2 || pcb->state == CLOSING ||
                    pcb->state == LAST_ACK);
    return false;
}

/* Resets the closes left unacknowledged HTTP_CLOSING_NS: every byte of their answers was acknowledged before the
 * close, so only the FIN is lost, and lwIP would otherwise keep the pcb for minutes of retransmissions. */
static void reset_unacknowledged_closes(int64_t now)
{
    for (unsigned i = 0; i < HTTP_CLOSING_MAX; i++) {
        struct http_closing_entry *e = &closing.entries[i];
        enum http_closing_verdict verdict = http_closing_judge(e, e->pcb && still_closing(e), now);
        if (verdict == HTTP_CLOSING_RESET) {
            tcp_abort((struct tcp_pcb *)e->pcb); /* detached at the close: no callback of ours runs */
            httpd_counters.close_resets++;
        }
        if (verdict != HTTP_CLOSING_WAIT)
            e->pcb = 0;
    }
}

/* Each pass of the network task: listen (once), hand answered requests to lwIP, time out the slow. */
static int64_t httpd_pass(void *arg, int64_t now)
{
    (void)arg;
    if (!listen_tried)
        start_listening();
    reset_unacknowledged_closes(now);
    int64_t next = http_closing_next_due(&closing);
    for (unsigned i = 0; i < HTTPD_CONNS; i++) {
        struct httpd_conn *c = &httpd_conns[i];
        int state = atomic_load(&c->state);
        if ((state == CONN_QUEUED || state == CONN_WORKING) &&
            atomic_load_explicit(&c->answered, memory_order_acquire)) {
            if (!c->resp.data && atomic_load(&c->gone))
                httpd_counters.cancelled++;
            start_sending(c);
        } else if (state == CONN_READING && now - c->accepted_ns > HTTPD_REQUEST_NS) {
            answer_now(c, 408, 0, "the request did not arrive within 5 s");
        } else if (state == CONN_SENDING && now - c->progress_ns > HTTPD_STALL_NS) {
            httpd_counters.stalled++;
            finish(c, true);
        } else if (state == CONN_SENDING) {
            send_more(c); /* room a tcp_sent did not fill (a tcp_write refused for want of segments) */
        }
        state = atomic_load(&c->state);
        int64_t due = state == CONN_READING ? c->accepted_ns + HTTPD_REQUEST_NS + 1
                      : state == CONN_SENDING ? c->progress_ns + HTTPD_STALL_NS + 1 : 0;
        if (due && (!next || due < next))
            next = due;
    }
    return next;
}

static void httpd_report(struct sink *out, bool trusted);

void httpd_init(void)
{
    static struct net_report lines = { httpd_report, NET_REPORT_HTTP, NULL };
    net_report_add(&lines); /* "http: off" too */
    const char *opt = cmdline_get("pprof.http");
    if (!opt)
        return;
    uint64_t p;
    if (!parse_u64_range(opt, 1, 65535, &p)) {
        log_warn("httpd: pprof.http=%.16s is not a port 1..65535: server off", opt);
        return;
    }
    if (!net_available()) {
        log_warn("httpd: no network interface: server off");
        return;
    }
    const char *host_opt = cmdline_get("pprof.host");
    char host_error[HTTP_HOST_ERROR_MAX];
    if (host_opt && !http_host_names_parse(host_opt, &host_names, host_error, sizeof host_error)) {
        log_warn("httpd: pprof.host=: %s: server off", host_error);
        return;
    }
    uint8_t key[KEYED_KEY_MAX_BYTES];
    size_t key_len = 0;
    char error[KEYED_KEY_ERROR_MAX];
    if (!keyed_key_from_cmdline(key, &key_len, error, sizeof error)) {
        log_warn("httpd: udpsh.key: %s: server off", error);
        return;
    }
    if (key_len) {
        http_token_derive(key, key_len, token);
        memset(key, 0, sizeof key);
        keyed = true;
    }
    tcp_isn_secret_draw();
    if (!httpd_worker_start()) {
        log_warn("httpd: cannot start the worker task: server off");
        return;
    }
    port = (uint16_t)p;
    net_set_service(httpd_pass, 0);
    log_info("httpd: pprof.http on TCP port %u (%s, %s)", port, net_peers_rule(),
             keyed ? "bearer token required" : "no token");
}

static void httpd_report(struct sink *out, bool trusted)
{
    (void)trusted;
    if (!port) {
        sink_puts(out, "http: off\n");
        return;
    }
    unsigned open = 0;
    for (unsigned i = 0; i < HTTPD_CONNS; i++)
        open += atomic_load(&httpd_conns[i].state) != CONN_FREE;
    const struct httpd_counters *k = &httpd_counters;
    sink_printf(out, "http: port %u, %u open, %llu accepted, %llu not allowed, %llu segments refused, %llu no slot, "
                     "%llu cancelled, %llu stalled, %llu half-open evicted, %llu closes reset, answered",
                port, open, (unsigned long long)k->accepted, (unsigned long long)k->not_allowed,
                (unsigned long long)tcp_refused_segments(), (unsigned long long)k->no_slot,
                (unsigned long long)k->cancelled, (unsigned long long)k->stalled,
                (unsigned long long)tcp_half_open_evicted(), (unsigned long long)k->close_resets);
    bool any = false;
    for (unsigned i = 0; i < HTTPD_STATUS_KINDS; i++) {
        uint64_t n = __atomic_load_n(&k->by_status[i], __ATOMIC_RELAXED);
        if (n) {
            sink_printf(out, " %d:%llu", httpd_status_codes[i] ? httpd_status_codes[i] : 500, (unsigned long long)n);
            any = true;
        }
    }
    char running[PROFILE_HOLDER_MAX + 24];
    if (profile_session_holder(running, sizeof running, 0))
        sink_printf(out, "%s; running %s\n", any ? "" : " none", running);
    else
        sink_puts(out, any ? "\n" : " none\n");
}
