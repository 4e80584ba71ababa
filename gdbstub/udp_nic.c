/* gdbstub/udp_nic.c: the gdb UDP transport on the card the network task drives (gdbstub/udp_nic.h):
 * struct gdb_udp_port over netdev's polled transmit and poll, the UDP services' allowlist (net_peer_permitted)
 * and the kernel's clock, and the hand-over points in the network task and the timer tick
 * (debugger_timer_poll, hal/kernel_entry.h). */
#include <stdatomic.h>

#include "gdbstub/stop.h"
#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "kernel/cmdline.h"
#include "kernel/log.h"
#include "gdbstub/udp.h"
#include "gdbstub/udp_nic.h"
#include "kernel/net/netdev.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net_report.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/sink.h"

#define TICK_BUDGET 16

static struct netdev *card;
static _Atomic int64_t task_polled_ns; /* when the network task last polled the card; 0: not yet */
static uint64_t tick_polls;

static bool port_transmit(const uint8_t *frame, size_t len)
{
    return netdev_transmit_polled(card, frame, len);
}

static void deliver_to_debugger(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    gdb_udp_frame(frame, len); /* what is not the debugger's is dropped: nothing else runs now */
}

static int port_poll(int budget)
{
    return card->ops->poll(card, deliver_to_debugger, 0, budget);
}

static void port_relax(void) { cpu_relax(); }

static void port_session(bool begin)
{
    card->ops->set_rx_interrupt(card, !begin);
}

static const struct gdb_udp_port nic_port = {
    .transmit = port_transmit,
    .poll = port_poll,
    .permits = net_peer_permitted,
    .now_ns = time_ns,
    .relax = port_relax,
    .session = port_session,
};

static void gdb_udp_nic_report(struct sink *out, bool show_peer);

void gdb_udp_nic_init(struct netdev *nic)
{
    const char *opt = cmdline_get("gdb.udp");
    if (!opt)
        return;
    uint64_t number;
    if (!parse_u64_range(opt, 1, 65535, &number)) {
        log_warn("gdb: gdb.udp=%.32s is not a UDP port 1..65535: ignored", opt);
        return;
    }
    if (!gdb_stop_enabled()) {
        log_warn("gdb: gdb.udp=%u, but the debugger is off (gdb=off): ignored", (unsigned)number);
        return;
    }
    card = nic;
    static struct net_report lines = { gdb_udp_nic_report, NET_REPORT_DEBUGGER, NULL };
    net_report_add(&lines);
    gdb_udp_auth_start(); /* udpsh.key= keys this port too; its log line before the one below */
    gdb_udp_init(&nic_port, nic->mac, (uint16_t)number);
    log_info("gdb: listening on UDP port %u once the interface has an address (polled, %s)", (unsigned)number,
             nic->driver);
}

bool gdb_udp_nic_claim(const uint8_t *frame, size_t len)
{
    if (card && gdb_udp_wants_arp(frame, len)) {
        gdb_udp_frame(frame, len); /* the answer to the debugger's question */
        return false;              /* and lwIP's too, if it asked the same */
    }
    if (!card || !gdb_udp_wants(frame, len))
        return false;
    gdb_udp_frame(frame, len);
    return true;
}

void gdb_udp_nic_set_address(uint32_t address, uint32_t netmask, uint32_t gateway)
{
    if (!card)
        return;
    gdb_udp_set_route(netmask, gateway);
    gdb_udp_set_address(address);
}

void gdb_udp_nic_task_polled(void)
{
    if (!card)
        return;
    atomic_store_explicit(&task_polled_ns, time_ns(), memory_order_relaxed);
    enum gdb_udp_stop stop = gdb_udp_take_stop();
    if (stop == GDB_UDP_NO_STOP)
        return;
    gdb_stop_for_transport(&gdb_udp_transport, stop == GDB_UDP_STOP_INTERRUPT);
}

/* Frames the tick takes off the card while the network task is late: the debugger's, and ARP for our address
 * (lwIP is not answering either); the rest is dropped. */
static void deliver_from_tick(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    gdb_udp_frame(frame, len);
}

/* The timer's poll (hal/kernel_entry.h): with gdb.udp=, CPU 0 polls the card while the network task is late. */
void debugger_timer_poll(void)
{
    if (!card || cpu_index() != 0)
        return;
    int64_t polled = atomic_load_explicit(&task_polled_ns, memory_order_relaxed);
    if (polled == 0 || time_ns() - polled < GDB_UDP_TASK_LATE_NS)
        return;
    tick_polls++;
    card->ops->poll(card, deliver_from_tick, 0, TICK_BUDGET);
    enum gdb_udp_stop stop = gdb_udp_take_stop();
    if (stop != GDB_UDP_NO_STOP)
        gdb_request_stop(&gdb_udp_transport, stop == GDB_UDP_STOP_INTERRUPT);
}

/* `net`'s gdb lines; the peer's address and port only for a trusted reader (the console, a keyed UDP shell
 * reader), else "peer hidden". */
static void gdb_udp_nic_report(struct sink *out, bool show_peer)
{
    if (!card)
        return;
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    uint32_t ip;
    uint16_t port;
    uint32_t a = gdb_udp_address();
    sink_printf(out, "gdb udp: port %u at %s, ", gdb_udp_port_number(), ipv4_text(a).s);
    if (gdb_udp_peer(&ip, &port) && show_peer)
        sink_printf(out, "peer %s:%u", ipv4_text(ip).s, port);
    else if (gdb_udp_peer(&ip, &port))
        sink_puts(out, "peer hidden");
    else
        sink_puts(out, "no peer");
    sink_printf(out, ", %llu in, %llu out, %llu stops, %llu repeats, %llu not allowed, %llu not the peer, "
                     "%llu refused, %llu idle junk, %llu tx failed, %llu card stuck, %llu tick polls\n",
                (unsigned long long)c.datagrams_in, (unsigned long long)c.datagrams_out,
                (unsigned long long)c.stops, (unsigned long long)c.repeats, (unsigned long long)c.not_allowed,
                (unsigned long long)c.not_peer, (unsigned long long)c.dropped_open, (unsigned long long)c.dropped_idle,
                (unsigned long long)c.tx_failed, (unsigned long long)c.card_stuck, (unsigned long long)tick_polls);
    sink_printf(out, "gdb unproven: %llu repeats dropped, %llu reply-looking dropped, %llu hellos over budget\n",
                (unsigned long long)c.repeats_dropped, (unsigned long long)c.reply_looking,
                (unsigned long long)c.hellos_limited);
    sink_printf(out, "gdb frames: %llu seen, %llu not ours, %llu arp replies, %llu fragments, %llu reassembled, "
                     "%llu malformed, %llu bad checksum, %llu reassembly dropped, %llu hostile source, "
                     "%llu not admitted, %llu arp requests sent, %llu neighbours\n",
                (unsigned long long)f.frames, (unsigned long long)f.not_ours, (unsigned long long)f.arp_replies,
                (unsigned long long)f.fragments,
                (unsigned long long)f.reassembled, (unsigned long long)f.malformed,
                (unsigned long long)f.bad_checksum, (unsigned long long)f.reassembly_dropped,
                (unsigned long long)f.hostile_source, (unsigned long long)f.not_admitted,
                (unsigned long long)f.arp_requests, (unsigned long long)f.neighbours);
    gdb_udp_auth_report(out);
}
