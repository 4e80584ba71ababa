/* kernel/net/syn_queue.h: which half-open connection a SYN to a full listener evicts -- a pure choice over what
 * the network task read from lwIP's connections (kernel/net/lwip/lwip_hooks.c does the reading and the evicting).
 * lwIP itself drops a SYN while the listener's pending connections are at its backlog and keeps a half-open one
 * (SYN_RCVD) for 20 s, so four forged SYNs from addresses that never answer would keep the port shut; evicting
 * the oldest half-open connection lets every new SYN in (lwIP has no SYN cookies). The same holds when half-open
 * connections and others take every one of lwIP's few connections. */
#ifndef KERNEL_NET_SYN_QUEUE_H
#define KERNEL_NET_SYN_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One of lwIP's active connections, in the order of lwIP's list (the newest first: lwIP puts a new one at the
 * head). */
struct syn_queue_pcb {
    bool half_open;       /* SYN_RCVD, and a child of the listener the SYN is for */
    uint32_t quiet_ticks; /* TCP slow-timer ticks since the peer last sent it anything */
};

/* The index in pcbs of the connection to evict before a SYN reaches a listener with `pending` of its `backlog`
 * connections not yet accepted, or when lwIP has no connection left to give it (pool_full: n is all it has):
 * the half-open one quiet the longest (on a tie, the later in the list, which lwIP made earlier). -1 when the
 * backlog and the pool have room, or when none is half-open (nothing a SYN may take). */
int syn_queue_victim(const struct syn_queue_pcb *pcbs, size_t n, unsigned pending, unsigned backlog, bool pool_full);

#endif
