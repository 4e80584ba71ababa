/* kernel/net/lwip/lwip_hooks.c: lwIP's TCP hooks (kernel/net/lwip/lwip_hooks.h): the ISN secret, the
 * allowlist at the door (for a listening or connected pcb, and for every IPv4 packet as it arrives: a stranger's
 * TCP, and its UDP to a port nothing is bound to, get nothing back), and room made for a permitted SYN when the
 * listener's backlog is full of half-open connections (kernel/net/syn_queue.h). The hooks run in the network
 * task, the only caller of lwIP. */
#include "kernel/net/lwip/lwip_hooks.h"

#include "hal/cpu.h"
#include "kernel/lib/string.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/boot_secret.h"
#include "kernel/net/lwip/tcp_isn.h"
#include "kernel/net/syn_queue.h"
#include "lwip/ip.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/prot/udp.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"

static uint8_t isn_secret[SHA256_DIGEST_SIZE];
static uint64_t refused;
static uint64_t evicted;

void tcp_isn_secret_draw(void)
{
    /* keyed_boot_draw mixes udpsh.key= in when there is one: a machine whose entropy is weak still has numbers
     * nobody without the key can predict. Its own domain keeps them apart from every other service's secret. */
    struct keyed_boot b;
    keyed_boot_draw("kprof tcp isn v1", &b);
    memcpy(isn_secret, b.secret, sizeof isn_secret);
    memset(&b, 0, sizeof b); /* only the secret lives on, in isn_secret */
}

uint32_t lwip_hook_tcp_isn(const struct ip4_addr *local_ip, uint16_t local_port, const struct ip4_addr *remote_ip,
                           uint16_t remote_port)
{
    return tcp_isn(isn_secret, lwip_ntohl(ip4_addr_get_u32(local_ip)), local_port,
                   lwip_ntohl(ip4_addr_get_u32(remote_ip)), remote_port, (uint64_t)time_ns());
}

signed char lwip_hook_tcp_inpacket(struct tcp_pcb *pcb, struct pbuf *p)
{
    (void)pcb;
    (void)p;
    /* Asked for a listening pcb before lwIP answers a SYN, and for every connection's segments: an address off
     * the allowlist gets no SYN-ACK and no RST, as a UDP service gives it no answer. */
    if (net_peer_permitted(lwip_ntohl(ip4_addr_get_u32(ip4_current_src_addr()))))
        return ERR_OK;
    refused++;
    return ERR_ABRT;
}

/* Whether a UDP socket is bound to port: lwIP answers a datagram to any other port with an ICMP port
 * unreachable (after an ARP request for the sender). */
static bool udp_port_bound(uint16_t port)
{
    for (const struct udp_pcb *pcb = udp_pcbs; pcb; pcb = pcb->next)
        if (pcb->local_port == port)
            return true;
    return false;
}

/* A stranger's UDP datagram to a port nothing is bound to: dropped, so it gets no ICMP port unreachable (and
 * causes no ARP request) -- a forged source buys no reflection. Datagrams to a bound port go on to their
 * service, which refuses strangers itself and counts them (the UDP shell's `not allowed`); DHCP's answers come
 * to its bound port 68 before the allowlist (the local subnet) is even known. */
static bool stranger_udp_to_closed_port(const struct ip_hdr *h, const struct pbuf *p)
{
    uint16_t hlen = IPH_HL_BYTES(h);
    if (IPH_OFFSET_BYTES(h) != 0 || p->len < hlen + UDP_HLEN)
        return false; /* a later fragment, or a first piece too short: lwIP's own checks and reassembly rules */
    const struct udp_hdr *u = (const struct udp_hdr *)((const uint8_t *)p->payload + hlen);
    return !udp_port_bound(lwip_ntohs(u->dest));
}

static struct tcp_pcb_listen *listener_on(uint16_t port)
{
    for (struct tcp_pcb_listen *l = tcp_listen_pcbs.listen_pcbs; l; l = l->next)
        if (l->local_port == port)
            return l;
    return NULL;
}

/* Whether lwIP already has a connection for this 4-tuple (a retransmitted SYN goes to it, not to the listener). */
static bool connection_exists(struct tcp_pcb *list, uint32_t src_ip, uint16_t src_port, uint16_t dst_port)
{
    for (struct tcp_pcb *pcb = list; pcb; pcb = pcb->next)
        if (pcb->local_port == dst_port && pcb->remote_port == src_port &&
            ip4_addr_get_u32(&pcb->remote_ip) == src_ip)
            return true;
    return false;
}

/* The listener's oldest half-open connection goes when its backlog or lwIP's pool is full, silently (its peer may
 * be a forged address that never answers ARP: a RST would only wait for that too), so that the SYN after this one
 * is not dropped. */
static void evict_half_open(struct tcp_pcb_listen *l)
{
    struct syn_queue_pcb seen[MEMP_NUM_TCP_PCB];
    struct tcp_pcb *pcbs[MEMP_NUM_TCP_PCB];
    size_t n = 0;
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb && n < MEMP_NUM_TCP_PCB; pcb = pcb->next) {
        seen[n] = (struct syn_queue_pcb){ pcb->state == SYN_RCVD && pcb->listener == l, tcp_ticks - pcb->tmr };
        pcbs[n++] = pcb;
    }
    /* lwIP would reuse a TIME_WAIT pcb for the SYN (tcp_alloc): the pool is full only when every pcb is active */
    int victim = syn_queue_victim(seen, n, l->accepts_pending, l->backlog, n >= MEMP_NUM_TCP_PCB);
    if (victim < 0)
        return;
    tcp_abandon(pcbs[victim], 0); /* gives the listener back its backlog place (tcp_backlog_accepted) */
    evicted++;
}

/* A permitted peer's SYN (not a fragment) to one of our addresses, for a listener. */
static void make_room_for_syn(const struct ip_hdr *h, const struct pbuf *p, const struct netif *inp)
{
    uint16_t hlen = IPH_HL_BYTES(h);
    if ((IPH_OFFSET(h) & PP_HTONS(IP_OFFMASK | IP_MF)) || p->len < hlen + TCP_HLEN ||
        ip4_addr_get_u32(&h->dest) != ip4_addr_get_u32(netif_ip4_addr(inp)))
        return;
    const struct tcp_hdr *t = (const struct tcp_hdr *)((const uint8_t *)p->payload + hlen);
    if ((TCPH_FLAGS(t) & (TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN)) != TCP_SYN)
        return;
    uint16_t src_port = lwip_ntohs(t->src), dst_port = lwip_ntohs(t->dest);
    struct tcp_pcb_listen *l = listener_on(dst_port);
    if (!l)
        return;
    uint32_t src_ip = ip4_addr_get_u32(&h->src);
    if (connection_exists(tcp_active_pcbs, src_ip, src_port, dst_port) ||
        connection_exists(tcp_tw_pcbs, src_ip, src_port, dst_port))
        return;
    evict_half_open(l);
}

int lwip_hook_ip4_input(struct pbuf *p, struct netif *inp)
{
    /* Only the version is checked yet: a first piece too short for the addresses is left to lwIP's own checks,
     * which drop it. Fragments of a stranger's TCP carry the protocol too, and go with the rest. */
    if (p->len < IP_HLEN)
        return 0;
    const struct ip_hdr *h = (const struct ip_hdr *)p->payload;
    bool tcp = IPH_PROTO(h) == IP_PROTO_TCP;
    if (!tcp && IPH_PROTO(h) != IP_PROTO_UDP)
        return 0;
    if (net_peer_permitted(lwip_ntohl(ip4_addr_get_u32(&h->src)))) {
        if (tcp)
            make_room_for_syn(h, p, inp);
        return 0;
    }
    if (tcp)
        refused++;
    else if (!stranger_udp_to_closed_port(h, p))
        return 0;
    pbuf_free(p);
    return 1;
}

uint64_t tcp_refused_segments(void)
{
    return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

uint64_t tcp_half_open_evicted(void)
{
    return __atomic_load_n(&evicted, __ATOMIC_RELAXED);
}
