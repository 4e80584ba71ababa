/* kernel/net/lwip/lwip_hooks.c: lwIP's TCP hooks (kernel/net/lwip/lwip_hooks.h): the ISN secret and the
 * allowlist at the door (for a listening or connected pcb, and for every IPv4 packet as it arrives). The hooks
 * run in the network task, the only caller of lwIP. */
#include "kernel/net/lwip/lwip_hooks.h"

#include "hal/cpu.h"
#include "kernel/lib/string.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/boot_secret.h"
#include "kernel/net/lwip/tcp_isn.h"
#include "lwip/ip.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ip4.h"
#include "lwip/tcp.h"

static uint8_t isn_secret[SHA256_DIGEST_SIZE];
static uint64_t refused;

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

int lwip_hook_ip4_input(struct pbuf *p, struct netif *inp)
{
    (void)inp;
    /* Only the version is checked yet: a first piece too short for the addresses is left to lwIP's own checks,
     * which drop it. Fragments of a stranger's TCP carry the protocol too, and go with the rest. */
    if (p->len < IP_HLEN)
        return 0;
    const struct ip_hdr *h = (const struct ip_hdr *)p->payload;
    if (IPH_PROTO(h) != IP_PROTO_TCP || net_peer_permitted(lwip_ntohl(ip4_addr_get_u32(&h->src))))
        return 0;
    refused++;
    pbuf_free(p);
    return 1;
}

uint64_t tcp_refused_segments(void)
{
    return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}
