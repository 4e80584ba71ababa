/* kernel/net/netload.c: netload's sessions, the kernel's end of a UDP load test that gives `profile` something
 * to look at other than an idle machine: send sequence-numbered datagrams at a fixed rate, count what arrives
 * (lost, out of order), or send every datagram back. The work happens in the network task (sending from its
 * poll hook, receiving in its UDP handler), so a profile taken meanwhile sees the driver and lwIP; the command
 * that started the session (kernel/shell/cmd_netload.c) waits for the end and prints the figures. One session at a
 * time. A send an unkeyed UDP request started ends, at the latest, when the token that allowed it expires: a
 * bearer token is good for 30-60 s, and what it allowed should not go on without it. */
#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/labels.h"
#include "kernel/net/net.h"
#include "kernel/net/netload.h"
#include "kernel/task.h"

#define NETLOAD_MAX_PORTS 4
#define SEND_BATCH 64           /* datagrams per pass of the network loop, so receiving is not starved */

static struct {
    atomic_bool active;
    enum netload_mode mode;
    uint16_t port;      /* sink/echo: the port listened on; send: the destination port */
    uint32_t host;      /* send: the destination */
    uint32_t size, pps;
    int64_t start_ns, end_ns;
    bool token_cut;     /* send: end_ns is the token's expiry, before its seconds were up */
    uint64_t sent, sent_bytes, send_failed, send_held, echoed;
    struct netload_rx_stats rx;
    struct task *worker; /* the network task, labelled netload=<mode> for the session */
    const struct label_set *labelled, *labels_before;
} session;

static uint16_t bound_ports[NETLOAD_MAX_PORTS];
static unsigned bound_count;
static atomic_bool claimed;
static uint64_t token_stops;

/* Network task: every datagram to a port netload bound. */
static void datagram(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *data, size_t len)
{
    uint16_t port = (uint16_t)(uintptr_t)arg;
    if (!atomic_load_explicit(&session.active, memory_order_acquire))
        return;
    bool ours = session.mode == NETLOAD_SEND ? port == NETLOAD_SEND_PORT : port == session.port;
    if (!ours)
        return;
    struct netload_header h;
    if (netload_decode(data, len, &h) != NETLOAD_OK) {
        netload_rx_invalid(&session.rx);
        return;
    }
    netload_rx_account(&session.rx, h.seq, len);
    if (session.mode == NETLOAD_ECHO && net_udp_send(NET_UDP_NOW_OR_FAIL, port, src_ip, src_port, data, len))
        session.echoed++;
}

/* Network task: sends what is due at the session's rate; returns when it next has something to send. */
static int64_t send_due(void *arg, int64_t now)
{
    (void)arg;
    static uint8_t payload[NETLOAD_SIZE_MAX];
    if (!atomic_load_explicit(&session.active, memory_order_acquire) || session.mode != NETLOAD_SEND)
        return 0;
    if (now - session.end_ns >= 0)
        return 0;
    /* PPS 0 is "as fast as the device takes them": one batch per pass of the network loop. */
    uint64_t due = session.pps ? (uint64_t)(now - session.start_ns) * session.pps / 1000000000u + 1
                               : session.sent + SEND_BATCH;
    for (int n = 0; session.sent < due && n < SEND_BATCH; n++) {
        netload_encode(payload, sizeof payload, session.sent, (uint64_t)now, session.size);
        if (!net_udp_send(NET_UDP_NOW_OR_RETRY, NETLOAD_SEND_PORT, session.host, session.port, payload,
                          session.size)) {
            /* The transmit ring is full, or lwIP holds no more for an address it is resolving: the datagram
             * keeps its sequence number and goes out on a later pass, so a rate the device cannot sustain shows
             * as a lower rate, not as loss. Each counted apart: `net` counts the ring's too. */
            if (net_udp_refused_by_ring())
                session.send_failed++;
            else
                session.send_held++;
            break;
        }
        session.sent_bytes += session.size;
        session.sent++;
    }
    if (session.sent < due || session.pps == 0)
        return now; /* behind (or flat out): come back at once */
    return session.start_ns + (int64_t)((session.sent * 1000000000u) / session.pps);
}

static bool bind_once(uint16_t port)
{
    for (unsigned i = 0; i < bound_count; i++)
        if (bound_ports[i] == port)
            return true;
    if (bound_count == NETLOAD_MAX_PORTS || !net_udp_bind(port, datagram, (void *)(uintptr_t)port))
        return false;
    bound_ports[bound_count++] = port;
    return true;
}

const char *netload_mode_name(enum netload_mode mode)
{
    return mode == NETLOAD_SEND ? "send" : mode == NETLOAD_SINK ? "sink" : "echo";
}

enum netload_start_result netload_start(const struct netload_request *req, const char **unlabelled_why)
{
    *unlabelled_why = 0;
    if (!net_available())
        return NETLOAD_NO_NETWORK;
    bool free_ = false;
    if (!atomic_compare_exchange_strong(&claimed, &free_, true))
        return NETLOAD_BUSY;
    uint16_t local = req->mode == NETLOAD_SEND ? NETLOAD_SEND_PORT : req->port;
    if (!bind_once(local)) {
        atomic_store(&claimed, false);
        return NETLOAD_CANNOT_LISTEN;
    }
    session.mode = req->mode;
    session.port = req->port;
    session.host = req->host;
    session.size = req->size;
    session.pps = req->pps;
    session.sent = session.sent_bytes = session.send_failed = session.send_held = session.echoed = 0;
    netload_rx_init(&session.rx);
    session.start_ns = time_ns();
    session.end_ns = session.start_ns + (int64_t)req->seconds * 1000000000;
    session.token_cut = req->mode == NETLOAD_SEND && req->until_ns && req->until_ns < session.end_ns;
    if (session.token_cut)
        session.end_ns = req->until_ns > session.start_ns ? req->until_ns : session.start_ns;
    /* The network task does the session's work: its samples carry netload=<mode> meanwhile. */
    session.worker = net_task_get();
    session.labels_before = session.worker ? task_labels_hold(session.worker) : 0;
    session.labelled =
        session.worker ? label_intern_one("netload", netload_mode_name(req->mode), unlabelled_why) : 0;
    if (session.labelled)
        task_set_labels(session.worker, session.labelled);
    atomic_store_explicit(&session.active, true, memory_order_release);
    if (req->mode == NETLOAD_SEND)
        net_set_poller(send_due, 0);
    return NETLOAD_STARTED;
}

void netload_finish(struct netload_result *out)
{
    task_wait_until(session.end_ns, TASK_WAIT_NET); /* the shell waits out the session: on the network */
    atomic_store_explicit(&session.active, false, memory_order_release);
    net_set_poller(0, 0);
    if (session.labelled)
        task_replace_labels(session.worker, session.labelled, session.labels_before);
    label_release(session.labelled);
    label_release(session.labels_before);
    session.labelled = session.labels_before = 0;
    out->elapsed_ns = time_ns() - session.start_ns;
    out->sent = session.sent;
    out->sent_bytes = session.sent_bytes;
    out->send_failed = session.send_failed;
    out->send_held = session.send_held;
    out->echoed = session.echoed;
    out->rx = session.rx;
    out->token_expired = session.token_cut;
    if (session.token_cut)
        token_stops++;
    atomic_store(&claimed, false);
}

uint64_t netload_token_stops(void)
{
    return token_stops;
}
