/* kernel/net/allowlist.h: who may talk to us over UDP -- the `udpsh.allow=CIDR[,CIDR]` kernel option, or by
 * default the local subnet, for every UDP service: the UDP shell answers only such senders, the gdb transport
 * (gdb.udp=) admits only such peers, and `profile stream` sends only to such addresses. A datagram from any
 * other address gets no answer at all.
 *
 * An entry is a.b.c.d/prefix (prefix 0..32) or a bare a.b.c.d, which means /32. Octets are decimal 0..255
 * without leading zeros ("010" could mean octal to some readers, so it means nothing here); nothing else may
 * appear, not even a space. Host bits are allowed and masked off: 10.0.2.15/24 is 10.0.2.0/24. Addresses are
 * uint32_t in host order, 10.0.2.15 being 0x0a00020f. */
#ifndef KERNEL_NET_ALLOWLIST_H
#define KERNEL_NET_ALLOWLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sink.h"

/* How much any UDP service says to a sender it has not yet seen receive at its address: at most
 * NET_UDP_AMPLIFICATION times what came in, bytes counted as on the wire (the UDP payload plus
 * NET_UDP_HEADER_BYTES of IPv4 and UDP headers, both ways), so a forged source address buys a forger little. */
#define NET_UDP_HEADER_BYTES 28 /* an IPv4 header without options (20) and a UDP header (8) */
#define NET_UDP_AMPLIFICATION 3

/* True when a reply of reply_len payload bytes to a datagram of received_len payload bytes keeps to that
 * budget. 64-bit sums: a datagram is at most 64 KiB, so nothing here can overflow. */
static inline bool net_reply_within_budget(size_t received_len, size_t reply_len)
{
    return (uint64_t)reply_len + NET_UDP_HEADER_BYTES <=
           NET_UDP_AMPLIFICATION * ((uint64_t)received_len + NET_UDP_HEADER_BYTES);
}

#define ALLOWLIST_MAX 8
/* Enough for every error allowlist_parse writes, the quoted entry included. */
#define ALLOWLIST_ERROR_MAX 96

struct allow_entry {
    uint32_t net;  /* host order, host bits cleared */
    uint32_t mask; /* host order, prefix leading ones */
    unsigned prefix;
};

struct allowlist {
    unsigned count; /* 0: nobody is permitted */
    struct allow_entry entries[ALLOWLIST_MAX];
};

/* Parses the option's value. On success fills *out and returns true; on failure leaves *out untouched,
 * writes one line (no newline) naming the bad entry into error, e.g. "'10.0.0.256/8': octet above 255",
 * and returns false. */
bool allowlist_parse(const char *text, struct allowlist *out, char *error, size_t error_cap);

/* The default: the one subnet of addr with netmask. Fails closed -- an empty list, permitting nobody, and
 * false -- when the address is 0.0.0.0, or the mask is not leading ones or is 0.0.0.0 (a "local subnet" of
 * the whole Internet is not a default anyone meant). */
bool allowlist_local_subnet(struct allowlist *out, uint32_t addr, uint32_t netmask);

bool allowlist_permits(const struct allowlist *list, uint32_t addr);

/* Writes the list in the option's own syntax ("10.0.2.0/24,192.168.1.7/32"), or "nobody" when empty; no
 * newline. */
void allowlist_format(const struct allowlist *list, struct sink *out);

/* ---- the kernel's one allowlist ---- */

/* Once at boot, in task context, from udpsh_init (kernel/udpsh/udpsh.c) before the UDP shell listens: reads
 * udpsh.allow=. One that does not parse logs one line and leaves the default, the local subnet. */
void net_peers_init(void);
/* What net_peer_permitted goes by, for the boot log: "udpsh.allow" or "local subnet". */
const char *net_peers_rule(void);
/* Whether ip (host order) may talk to us: never an address no sender holds (netpoll_source_refused: 0.0.0.0,
 * broadcast, multicast, class E, loopback, our own, the subnet's broadcast); else on udpsh.allow=, or else on
 * the local subnet once there is an address (none before: fails closed). Reads only; safe with interrupts off and from the stopped stub. */
bool net_peer_permitted(uint32_t ip);

#endif
