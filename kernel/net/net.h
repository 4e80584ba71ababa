/* kernel/net/net.h: the network as the rest of the kernel sees it -- one network card (kernel/net/netdev.h)
 * run by lwIP in one network task (lwIP is never called from an interrupt or from another task), an address
 * from DHCP or the kernel command line, and a queue through which other tasks hand UDP datagrams to that task. */
#ifndef KERNEL_NET_NET_H
#define KERNEL_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_UDP_MAX 1472 /* the largest UDP payload that fits one Ethernet frame without fragments */

/* Probes the NIC and starts the network task (from kmain). Without a NIC, networking stays off, loudly. */
void net_init(void);
bool net_available(void);
/* The card the network task drives (for `net`'s figures), NULL while networking is off. */
struct netdev;
const struct netdev *net_device(void);
/* The interface's IPv4 address and netmask in host byte order; 0 while DHCP has not answered. */
uint32_t net_address(void);
uint32_t net_netmask(void);

/* What net_udp_send does when the datagram cannot go out at once -- the send queue to the network task is
 * full, or the device's transmit ring is. Each caller says which it can live with. */
enum net_udp_when_full {
    /* Any task but the network task: hand it to the network task's queue, waiting while the queue is full; a
     * full transmit ring is retried by the network task (a datagram refused TX_RETRY_PASSES times is dropped
     * and counted). */
    NET_UDP_WAIT,
    /* As NET_UDP_WAIT, but waiting while the queue is half full: a sender that keeps it busy for minutes (the
     * profiler's stream) leaves room for the replies the network task queues without waiting (the UDP shell's
     * tokens and refusals, NET_UDP_QUEUE_OR_FAIL), which a full queue would lose. */
    NET_UDP_WAIT_SHARED,
    /* The network task: the same queue, but never wait (only this task drains it) -- false, counted as a send
     * failure, when the queue itself is full. For answers that must not be lost to a busy ring. */
    NET_UDP_QUEUE_OR_FAIL,
    /* The network task: send at once, without the queue; a full transmit ring (as while netload sends flat
     * out) loses the datagram, counted as a send failure. */
    NET_UDP_NOW_OR_FAIL,
    /* The network task, for a caller that keeps the datagram and tries again on a later pass (netload's
     * sender): as NOW_OR_FAIL, but a refusal is a wait, not a loss, so it is not counted. */
    NET_UDP_NOW_OR_RETRY,
};

/* Sends a datagram from local port src_port (which a receiver bound with net_udp_bind) as when_full says.
 * True when it was sent or queued; false when networking is off, len is over NET_UDP_MAX, nothing is bound to
 * src_port (the NOW modes), or the queue or ring was full as above. Sent datagrams count as `udp: out`. */
bool net_udp_send(enum net_udp_when_full when_full, uint16_t src_port, uint32_t dst_ip, uint16_t dst_port,
                  const void *data, size_t len);
/* The network task, after a NOW-mode net_udp_send that returned false: true when the device's full transmit
 * ring refused the frame; false when lwIP did not get as far -- above all an address still being resolved whose
 * ARP queue is full (lwIP's MEMP_NUM_ARP_QUEUE datagrams wait for the answer; the rest are refused). */
bool net_udp_refused_by_ring(void);

/* Runs in the network task for every datagram arriving on port (data valid only during the call). */
typedef void (*net_udp_handler)(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *data, size_t len);
/* Binds port to handler (from any task); the binding is made by the network task. */
bool net_udp_bind(uint16_t port, net_udp_handler handler, void *arg);
/* Work the network task runs on each pass of its loop (netload's sender); returns the time it next wants
 * to run, in time_ns(), or 0 for none. */
typedef int64_t (*net_poll_fn)(void *arg, int64_t now_ns);
void net_set_poller(net_poll_fn fn, void *arg);
/* The one TCP service (the pprof.http= server, kernel/httpd/httpd.c): fn runs in the network task on every pass,
 * as a poller does, from the pass after this call for the rest of the boot -- its first run sets it up. */
void net_set_service(net_poll_fn fn, void *arg);
/* `net wedge MS`: the network task sleeps MS milliseconds without polling the card -- a wedged network task
 * on purpose, to show what still gets through (the gdb UDP transport's tick fallback). */
#define NET_WEDGE_MAX_MS 60000
void net_wedge(unsigned ms);
/* Wakes the network task (another task queued work for it). */
void net_kick(void);
/* The network task, NULL while networking is off (netload labels it for the length of a session). */
struct task;
struct task *net_task_get(void);

/* What `net` prints besides the driver's own figures (kernel/shell/cmd_net.c). Task context. */
struct net_stats {
    bool use_dhcp;                  /* the address came from DHCP, not ip= */
    uint64_t udp_in, udp_out, udp_out_failed;
    uint64_t rx_no_pbuf;            /* received frames dropped for want of an lwIP buffer */
    uint64_t queue_waits, queue_wait_ns; /* NET_UDP_WAIT* sends that found the queue full, and how long they waited */
    uint64_t tx_passes, tx_sent, tx_ns;  /* network-task passes that sent queued datagrams, how many, time spent */
    uint64_t lwip_heap_used, lwip_heap_avail, lwip_pbufs_used, lwip_pbufs_avail;
};
void net_get_stats(struct net_stats *st);

#endif
