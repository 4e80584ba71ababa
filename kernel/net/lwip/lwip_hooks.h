/* kernel/net/lwip/lwip_hooks.h: the hooks lwIP's TCP calls (lwipopts.h names this file as
 * LWIP_HOOK_FILENAME): initial sequence numbers from a secret drawn at boot (kernel/net/lwip/tcp_isn.h), and
 * every TCP segment from an address net_peer_permitted refuses dropped before lwIP answers it -- no SYN-ACK, no
 * RST, nothing. Included by lwIP's own files, so it names lwIP's types only as incomplete structs. */
#ifndef KERNEL_NET_LWIP_LWIP_HOOKS_H
#define KERNEL_NET_LWIP_LWIP_HOOKS_H

#include <stdint.h>

struct ip4_addr;
struct tcp_pcb;
struct pbuf;
struct netif;

/* Draws the ISN secret from the boot's entropy pool under its own domain label (kernel/net/boot_secret.h).
 * Task context, once, before any TCP pcb exists (the server's start, kernel/httpd/httpd.c). */
void tcp_isn_secret_draw(void);

/* The hooks themselves, in the network task (lwIP's types: ip_addr_t is struct ip4_addr, err_t signed char). */
uint32_t lwip_hook_tcp_isn(const struct ip4_addr *local_ip, uint16_t local_port, const struct ip4_addr *remote_ip,
                           uint16_t remote_port);
signed char lwip_hook_tcp_inpacket(struct tcp_pcb *pcb, struct pbuf *p);

/* Every IPv4 packet as it arrives, before lwIP reads past the version: a TCP segment from an address
 * net_peer_permitted refuses is eaten (freed, 1); a permitted peer's SYN to a listener whose backlog is full
 * first evicts that listener's oldest half-open connection (kernel/net/syn_queue.h). The TCP hook above is asked
 * only when some pcb matches; to a port nothing listens on, lwIP itself would answer the stranger a RST (and ARP
 * for it first). Anything else goes on (0). */
int lwip_hook_ip4_input(struct pbuf *p, struct netif *inp);

/* TCP segments dropped because their source is not permitted, for `net`. */
uint64_t tcp_refused_segments(void);
/* Half-open connections evicted for a permitted SYN to a listener whose backlog was full, for `net`. */
uint64_t tcp_half_open_evicted(void);

#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) \
    lwip_hook_tcp_isn(local_ip, local_port, remote_ip, remote_port)
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) lwip_hook_tcp_inpacket(pcb, p)
#define LWIP_HOOK_IP4_INPUT(p, inp) lwip_hook_ip4_input(p, inp)

#endif
