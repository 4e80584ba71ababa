/* kernel/net/netload.c: the kernel's end of netload, a UDP load test that gives `profile` something to look
 * at other than an idle machine. `netload send HOST PORT SECONDS [SIZE] [PPS]` sends sequence-numbered
 * datagrams at a fixed rate; `netload sink PORT SECONDS` counts what arrives (lost, out of order);
 * `netload echo PORT SECONDS` sends every datagram back. The work happens in the network task (sending from
 * its poll hook, receiving in its UDP handler), so a profile taken meanwhile sees the driver and lwIP; the
 * shell that started it waits for the end and prints the figures. One session at a time. */
#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/commands.h"
#include "kernel/labels.h"
#include "kernel/net/net.h"
#include "kernel/net/netload_proto.h"
#include "kernel/parse.h"
#include "kernel/string.h"
#include "kernel/task.h"

#define NETLOAD_MAX_SECONDS 600
#define NETLOAD_PPS_MAX 1000000
#define NETLOAD_SEND_PORT 40000 /* the local port `send` uses; echoes that come back are counted */
#define NETLOAD_MAX_PORTS 4
#define SEND_BATCH 64           /* datagrams per pass of the network loop, so receiving is not starved */

enum netload_mode { MODE_SEND, MODE_SINK, MODE_ECHO };

static struct {
    atomic_bool active;
    enum netload_mode mode;
    uint16_t port;      /* sink/echo: the port listened on; send: the destination port */
    uint32_t host;      /* send: the destination */
    uint32_t size, pps;
    int64_t start_ns, end_ns;
    uint64_t sent, sent_bytes, send_failed, echoed;
    struct netload_rx_stats rx;
} session;

static uint16_t bound_ports[NETLOAD_MAX_PORTS];
static unsigned bound_count;
static atomic_bool claimed;

/* Network task: every datagram to a port netload bound. */
static void datagram(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *data, size_t len)
{
    uint16_t port = (uint16_t)(uintptr_t)arg;
    if (!atomic_load_explicit(&session.active, memory_order_acquire))
        return;
    bool ours = session.mode == MODE_SEND ? port == NETLOAD_SEND_PORT : port == session.port;
    if (!ours)
        return;
    struct netload_header h;
    if (netload_decode(data, len, &h) != NETLOAD_OK) {
        netload_rx_invalid(&session.rx);
        return;
    }
    netload_rx_account(&session.rx, h.seq, len);
    if (session.mode == MODE_ECHO && net_udp_send(NET_UDP_NOW_OR_FAIL, port, src_ip, src_port, data, len))
        session.echoed++;
}

/* Network task: sends what is due at the session's rate; returns when it next has something to send. */
static int64_t send_due(void *arg, int64_t now)
{
    (void)arg;
    static uint8_t payload[NETLOAD_SIZE_MAX];
    if (!atomic_load_explicit(&session.active, memory_order_acquire) || session.mode != MODE_SEND)
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
            /* The transmit ring is full: the datagram keeps its sequence number and goes out on a later pass,
             * so a rate the device cannot sustain shows as a lower rate, not as loss. */
            session.send_failed++;
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

static const char usage[] =
    "usage: netload send HOST PORT SECONDS [SIZE] [PPS] | netload sink PORT SECONDS | netload echo PORT SECONDS\n";

int cmd_netload(int argc, char **argv, struct sink *out)
{
    uint64_t port, seconds, size = NETLOAD_SIZE_DEFAULT, pps = NETLOAD_PPS_DEFAULT;
    uint32_t host = 0;
    enum netload_mode mode;
    if (argc >= 2 && strcmp(argv[1], "send") == 0 && argc >= 5 && argc <= 7 && parse_ipv4(argv[2], &host) &&
        parse_u64_range(argv[3], 1, 65535, &port) && parse_u64_range(argv[4], 1, NETLOAD_MAX_SECONDS, &seconds) &&
        (argc < 6 || parse_u64_range(argv[5], NETLOAD_HEADER_SIZE, NETLOAD_SIZE_MAX, &size)) &&
        (argc < 7 || parse_u64_range(argv[6], 0, NETLOAD_PPS_MAX, &pps)))
        mode = MODE_SEND;
    else if (argc == 4 && (strcmp(argv[1], "sink") == 0 || strcmp(argv[1], "echo") == 0) &&
             parse_u64_range(argv[2], 1, 65535, &port) && parse_u64_range(argv[3], 1, NETLOAD_MAX_SECONDS, &seconds))
        mode = strcmp(argv[1], "sink") == 0 ? MODE_SINK : MODE_ECHO;
    else {
        sink_puts(out, usage);
        return 1;
    }
    if (!net_available()) {
        sink_puts(out, "netload: no network interface\n");
        return 1;
    }
    bool free_ = false;
    if (!atomic_compare_exchange_strong(&claimed, &free_, true)) {
        sink_puts(out, "netload: busy (another netload is running)\n");
        return 1;
    }
    uint16_t local = mode == MODE_SEND ? NETLOAD_SEND_PORT : (uint16_t)port;
    if (!bind_once(local)) {
        sink_printf(out, "netload: cannot listen on UDP port %u (in use, or too many ports)\n", local);
        atomic_store(&claimed, false);
        return 1;
    }
    session.mode = mode;
    session.port = (uint16_t)port;
    session.host = host;
    session.size = (uint32_t)size;
    session.pps = (uint32_t)pps;
    session.sent = session.sent_bytes = session.send_failed = session.echoed = 0;
    netload_rx_init(&session.rx);
    session.start_ns = time_ns();
    session.end_ns = session.start_ns + (int64_t)seconds * 1000000000;
    /* The network task does the session's work: its samples carry netload=<mode> meanwhile, and the set it
     * had comes back afterwards unless something (`label`) changed it meanwhile. */
    struct task *worker = net_task_get();
    const char *why = 0;
    const struct label_set *before = worker ? task_labels(worker) : 0;
    const struct label_set *labelled = worker ? label_intern_one("netload", argv[1], &why) : 0;
    if (labelled)
        task_set_labels(worker, labelled);
    else if (worker)
        sink_printf(out, "netload: the network task runs unlabelled: %s\n", why);
    atomic_store_explicit(&session.active, true, memory_order_release);
    if (mode == MODE_SEND)
        net_set_poller(send_due, 0);
    else
        sink_printf(out, "netload: %s on UDP port %llu for %llu s\n", argv[1], (unsigned long long)port,
                    (unsigned long long)seconds);

    task_sleep_until(session.end_ns);
    atomic_store_explicit(&session.active, false, memory_order_release);
    net_set_poller(0, 0);
    if (labelled)
        task_replace_labels(worker, labelled, before);
    int64_t elapsed = time_ns() - session.start_ns;
    if (mode == MODE_SEND) {
        sink_puts(out, "netload send: ");
        netload_report_tx(out, session.sent, session.sent_bytes, elapsed);
        if (session.send_failed)
            sink_printf(out, "netload: the transmit ring was full %llu times (sending waited)\n",
                        (unsigned long long)session.send_failed);
        if (session.rx.packets) {
            sink_puts(out, "netload echoes: ");
            netload_report_rx(out, &session.rx, elapsed);
        }
    } else {
        sink_printf(out, "netload %s: ", argv[1]);
        netload_report_rx(out, &session.rx, elapsed);
        if (mode == MODE_ECHO)
            sink_printf(out, "netload echo: %llu datagrams sent back\n", (unsigned long long)session.echoed);
    }
    atomic_store(&claimed, false);
    return 0;
}
