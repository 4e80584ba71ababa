/* kernel/net/netpoll.c: polled Ethernet/ARP/IPv4/UDP (kernel/net/netpoll.h). Receive is strict: every length
 * is checked against what the frame really holds before a byte is read, IPv4 options are skipped but not
 * trusted, and a fragment set keeps a bit per 8-byte block so that duplicates, overlaps and every arrival
 * order are told apart (an overlap must carry the same bytes, or the whole set is dropped: two versions of
 * one datagram are an attack or a bug, never something to splice). Only a source the owner admits may start
 * or join a set, so a forger with another address cannot cancel the admitted source's; one with its address
 * can (the newest set wins), which is why the debugger admits nobody it has proven (gdbstub/udp.c). Where we send is learned from ARP replies to requests
 * we sent, never from a received frame's source: a forged frame cannot steer our answers. */
#include "kernel/net/netpoll.h"
#include "kernel/lib/string.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IP_PROTO_UDP 17
#define IP_FLAG_MF 0x2000
#define IP_OFFSET_MASK 0x1fff
#define ARP_LEN 28
#define IP_TTL 64
/* The IPv4 payload of a fragment we send: the largest multiple of 8 that fits the MTU. */
#define FRAGMENT_PAYLOAD ((NETPOLL_MTU - NETPOLL_IP_HEADER) & ~7u)
#define REASM_CAP (NETPOLL_UDP_HEADER + NETPOLL_UDP_MAX)
#define ARP_REQUEST 1
#define ARP_REPLY 2

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

uint32_t netpoll_sum(uint32_t sum, const uint8_t *data, size_t len)
{
    size_t i = 0;
    for (; i + 1 < len; i += 2)
        sum += get16(data + i);
    if (i < len)
        sum += (uint32_t)data[i] << 8;
    return sum;
}

uint16_t netpoll_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static uint32_t pseudo_header_sum(uint32_t src, uint32_t dst, size_t udp_len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + IP_PROTO_UDP + (uint32_t)udp_len;
}

void netpoll_init(struct netpoll *np, const uint8_t mac[6], uint32_t ip, uint16_t port)
{
    memset(np, 0, sizeof *np);
    memcpy(np->mac, mac, 6);
    np->ip = ip;
    np->port = port;
    np->next_id = 0x4b50; /* any start will do: only (src, id) pairs in flight at once must differ */
}

/* ---- ARP ----------------------------------------------------------------------------------------------- */

static bool group_mac(const uint8_t *mac) { return mac[0] & 1; }

static bool zero_mac(const uint8_t *mac)
{
    return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0;
}

bool netpoll_source_refused(uint32_t ip, uint32_t own, uint32_t netmask)
{
    if (ip == 0 || ip >> 28 >= 0xe || ip >> 24 == 127 || (own != 0 && ip == own))
        return true; /* 0.0.0.0, multicast, class E and 255.255.255.255, loopback, ourselves */
    /* The subnet's broadcast address; a /31 or /32 has none (RFC 3021). */
    return netmask != 0 && ~netmask > 1 && own != 0 && ip == (own | ~netmask);
}

static struct netpoll_neighbour *neighbour_find(struct netpoll *np, uint32_t ip)
{
    for (size_t i = 0; i < NETPOLL_NEIGHBOURS; i++)
        if (np->neighbours[i].ip == ip && ip != 0)
            return &np->neighbours[i];
    return 0;
}

/* The ARP reply in frame, when it answers a request of ours still outstanding: its neighbour entry. */
static struct netpoll_neighbour *arp_answered(const struct netpoll *np, const uint8_t *a, int64_t now_ns,
                                              bool any_age)
{
    if (get16(a + 6) != ARP_REPLY || np->ip == 0 || get32(a + 24) != np->ip || group_mac(a + 8) ||
        zero_mac(a + 8))
        return 0;
    struct netpoll_neighbour *n = neighbour_find((struct netpoll *)np, get32(a + 14));
    if (!n || n->asked_ns == 0 || (!any_age && now_ns - n->asked_ns > NETPOLL_ARP_ANSWER_NS))
        return 0;
    return n;
}

static bool arp_sound(const uint8_t *frame, size_t len)
{
    const uint8_t *a = frame + NETPOLL_ETH_HEADER;
    return len >= NETPOLL_ETH_HEADER + ARP_LEN && get16(a) == 1 && get16(a + 2) == ETHERTYPE_IPV4 && a[4] == 6 &&
           a[5] == 4;
}

/* An ARP frame of op from us (our MAC and address as the sender) to dst, target left zero, padded to the
 * minimum; returns the ARP part for the caller to fill in the target. */
static uint8_t *arp_frame(const struct netpoll *np, const uint8_t *dst, uint16_t op, uint8_t *frame)
{
    memset(frame, 0, NETPOLL_FRAME_MIN);
    memcpy(frame, dst, 6);
    memcpy(frame + 6, np->mac, 6);
    put16(frame + 12, ETHERTYPE_ARP);
    uint8_t *r = frame + NETPOLL_ETH_HEADER;
    put16(r, 1);
    put16(r + 2, ETHERTYPE_IPV4);
    r[4] = 6;
    r[5] = 4;
    put16(r + 6, op);
    memcpy(r + 8, np->mac, 6);
    put32(r + 14, np->ip);
    return r;
}

static enum netpoll_verdict arp_receive(struct netpoll *np, const uint8_t *frame, size_t len, int64_t now_ns,
                                        uint8_t *reply, size_t *reply_len)
{
    if (!arp_sound(frame, len)) {
        np->counts.malformed++;
        return NETPOLL_IGNORE;
    }
    const uint8_t *a = frame + NETPOLL_ETH_HEADER;
    if (get16(a + 6) == ARP_REPLY) {
        /* Only the answer to our own recent request teaches us a neighbour, and only once per request: an
         * unasked reply, a gratuitous one or a second answer changes nothing. */
        struct netpoll_neighbour *n = arp_answered(np, a, now_ns, false);
        if (!n || group_mac(frame + 6)) {
            np->counts.not_ours++;
            return NETPOLL_IGNORE;
        }
        memcpy(n->mac, a + 8, 6);
        n->known = true;
        n->learned_ns = now_ns;
        n->asked_ns = 0;
        np->counts.neighbours++;
        return NETPOLL_IGNORE;
    }
    /* Only a request for our address from a unicast sender gets an answer; gratuitous ARP is lwIP's business
     * when it runs, and nobody's while the machine is stopped. A request teaches us nothing. */
    if (get16(a + 6) != ARP_REQUEST || np->ip == 0 || get32(a + 24) != np->ip || group_mac(a + 8) ||
        get32(a + 14) == 0) {
        np->counts.not_ours++;
        return NETPOLL_IGNORE;
    }
    uint8_t *r = arp_frame(np, a + 8, ARP_REPLY, reply); /* to the sender's hardware address */
    memcpy(r + 18, a + 8, 10);            /* the sender's hardware and protocol addresses */
    *reply_len = NETPOLL_FRAME_MIN;
    np->counts.arp_replies++;
    return NETPOLL_REPLY;
}

bool netpoll_wants_arp(const struct netpoll *np, const uint8_t *frame, size_t len)
{
    if (len < NETPOLL_ETH_HEADER || get16(frame + 12) != ETHERTYPE_ARP || !arp_sound(frame, len))
        return false;
    return arp_answered(np, frame + NETPOLL_ETH_HEADER, 0, true) != 0;
}

/* ---- neighbours ---------------------------------------------------------------------------------------- */

static void arp_request(const struct netpoll *np, uint32_t target, uint8_t *frame)
{
    static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t *r = arp_frame(np, broadcast, ARP_REQUEST, frame);
    put32(r + 24, target);                /* the target's hardware address stays zero: it is the question */
}

/* How much an entry is worth keeping: a neighbour known beats a question pending (forged senders that
 * nobody answers for churn the pending ones, not the peer's or the gateway's answer), then the newer. */
static int64_t neighbour_worth(const struct netpoll_neighbour *n)
{
    return n->known ? INT64_MAX / 2 + n->learned_ns / 2 : n->asked_ns / 2;
}

/* The entry for ip: its own, or a free one, or else the one least worth keeping, emptied. */
static struct netpoll_neighbour *neighbour_slot(struct netpoll *np, uint32_t ip)
{
    struct netpoll_neighbour *n = neighbour_find(np, ip), *least = &np->neighbours[0];
    if (n)
        return n;
    for (size_t i = 0; i < NETPOLL_NEIGHBOURS; i++) {
        n = &np->neighbours[i];
        if (n->ip == 0)
            return n;
        if (neighbour_worth(n) < neighbour_worth(least))
            least = n;
    }
    memset(least, 0, sizeof *least);
    return least;
}

enum netpoll_route netpoll_route(struct netpoll *np, uint32_t dst, int64_t now_ns, uint8_t mac[6],
                                 uint8_t request[NETPOLL_FRAME_MIN])
{
    if (np->ip == 0 || netpoll_source_refused(dst, np->ip, np->netmask))
        return NETPOLL_ROUTE_NONE;
    uint32_t hop = dst;
    if ((dst & np->netmask) != (np->ip & np->netmask)) {
        hop = np->gateway;
        if (hop == 0 || netpoll_source_refused(hop, np->ip, np->netmask))
            return NETPOLL_ROUTE_NONE;
    }
    struct netpoll_neighbour *n = neighbour_slot(np, hop);
    n->ip = hop;
    if (n->known && now_ns - n->learned_ns > NETPOLL_NEIGHBOUR_NS)
        n->known = false; /* stale: asked afresh */
    bool asked_lately = n->asked_ns != 0 && now_ns - n->asked_ns < NETPOLL_ARP_RETRY_NS;
    if (n->known) {
        memcpy(mac, n->mac, 6);
        /* Past half its life an entry in use is asked about again, so that a long session does not lose a
         * reply to its expiry. */
        if (now_ns - n->learned_ns < NETPOLL_NEIGHBOUR_NS / 2 || asked_lately)
            return NETPOLL_ROUTE_KNOWN;
    } else if (asked_lately) {
        return NETPOLL_ROUTE_WAIT;
    }
    n->asked_ns = now_ns ? now_ns : 1; /* 0 means "not asked" */
    arp_request(np, hop, request);
    np->counts.arp_requests++;
    return n->known ? NETPOLL_ROUTE_REFRESH : NETPOLL_ROUTE_ASK;
}

/* ---- IPv4 ---------------------------------------------------------------------------------------------- */

struct ip_view {
    uint32_t src, dst;
    uint16_t id;
    bool more;
    size_t offset;          /* bytes */
    const uint8_t *payload;
    size_t payload_len;
};

/* The IPv4 header of frame, checked (version, lengths, checksum); false (counted) when it is not sound. */
static bool ip_parse(struct netpoll *np, const uint8_t *frame, size_t len, struct ip_view *v, bool count)
{
    if (len < NETPOLL_ETH_HEADER + NETPOLL_IP_HEADER) {
        if (count)
            np->counts.malformed++;
        return false;
    }
    const uint8_t *ip = frame + NETPOLL_ETH_HEADER;
    size_t avail = len - NETPOLL_ETH_HEADER;
    size_t ihl = (size_t)(ip[0] & 15) * 4;
    size_t total = get16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < NETPOLL_IP_HEADER || total < ihl || total > avail) {
        if (count)
            np->counts.malformed++;
        return false;
    }
    if (count && netpoll_fold(netpoll_sum(0, ip, ihl)) != 0) {
        np->counts.bad_checksum++;
        return false;
    }
    uint16_t frag = get16(ip + 6);
    v->src = get32(ip + 12);
    v->dst = get32(ip + 16);
    v->id = get16(ip + 4);
    v->more = frag & IP_FLAG_MF;
    v->offset = (size_t)(frag & IP_OFFSET_MASK) * 8;
    v->payload = ip + ihl;
    v->payload_len = total - ihl; /* a frame padded past the datagram's end: the padding is not payload */
    return ip[9] == IP_PROTO_UDP;
}

/* A whole UDP datagram (header included) from src to us: checked and, when it is to our port, accepted. */
static enum netpoll_verdict udp_accept(struct netpoll *np, uint32_t src, const uint8_t *src_mac,
                                       const uint8_t *udp, size_t len, struct netpoll_datagram *dg)
{
    if (len < NETPOLL_UDP_HEADER || get16(udp + 4) < NETPOLL_UDP_HEADER || get16(udp + 4) > len) {
        np->counts.malformed++;
        return NETPOLL_IGNORE;
    }
    size_t udp_len = get16(udp + 4);
    if (get16(udp + 2) != np->port || udp_len - NETPOLL_UDP_HEADER > NETPOLL_UDP_MAX) {
        np->counts.not_ours++;
        return NETPOLL_IGNORE;
    }
    /* A zero checksum is "none" over IPv4, and refused here: without it, fragments of two datagrams could be
     * spliced into one nobody sent. Anything else must hold. */
    if (get16(udp + 6) == 0 || netpoll_fold(netpoll_sum(pseudo_header_sum(src, np->ip, udp_len), udp, udp_len)) != 0) {
        np->counts.bad_checksum++;
        return NETPOLL_IGNORE;
    }
    dg->src_ip = src;
    dg->src_port = get16(udp);
    memcpy(dg->src_mac, src_mac, 6);
    dg->data = udp + NETPOLL_UDP_HEADER;
    dg->len = udp_len - NETPOLL_UDP_HEADER;
    np->counts.datagrams++;
    return NETPOLL_DATAGRAM;
}

static bool have_block(const struct netpoll *np, size_t block)
{
    return np->reasm.have[block / 8] & (1u << (block % 8));
}

static void reasm_drop(struct netpoll *np)
{
    if (np->reasm.active)
        np->counts.reassembly_dropped++;
    np->reasm.active = false;
}

static enum netpoll_verdict fragment_receive(struct netpoll *np, const uint8_t *src_mac, const struct ip_view *v,
                                             int64_t now_ns, struct netpoll_datagram *dg)
{
    /* Asked before anything else: a source the owner does not admit neither starts a set nor touches one. */
    if (!np->admit || !np->admit(np->admit_arg, v->src)) {
        np->counts.not_admitted++;
        return NETPOLL_IGNORE;
    }
    /* Every fragment but the last carries a multiple of 8 bytes; none may reach past the buffer. */
    if ((v->more && (v->payload_len % 8 != 0 || v->payload_len == 0)) || v->offset + v->payload_len > REASM_CAP) {
        if (np->reasm.active && np->reasm.src == v->src && np->reasm.id == v->id)
            reasm_drop(np);
        np->counts.malformed++;
        return NETPOLL_IGNORE;
    }
    if (np->reasm.active && now_ns - np->reasm.started_ns > NETPOLL_REASSEMBLY_NS)
        reasm_drop(np);
    if (!np->reasm.active || np->reasm.src != v->src || np->reasm.id != v->id) {
        /* One datagram at a time: the newest wins, so no sender can hold the buffer with a set it never
         * finishes. */
        reasm_drop(np);
        memset(np->reasm.have, 0, sizeof np->reasm.have);
        np->reasm.active = true;
        np->reasm.src = v->src;
        np->reasm.id = v->id;
        np->reasm.src_port = 0;
        np->reasm.total = 0;
        np->reasm.started_ns = now_ns;
    }
    size_t first = v->offset / 8, end = v->offset + v->payload_len;
    size_t last = (end + 7) / 8; /* one past */
    if (!v->more) {
        if ((np->reasm.total && np->reasm.total != end) || end == 0) {
            reasm_drop(np);
            np->counts.malformed++;
            return NETPOLL_IGNORE;
        }
        np->reasm.total = end;
    }
    if (np->reasm.total && end > np->reasm.total) {
        reasm_drop(np);
        np->counts.malformed++;
        return NETPOLL_IGNORE;
    }
    /* Bytes already held must be the same bytes again. */
    for (size_t b = first; b < last; b++) {
        if (!have_block(np, b))
            continue;
        size_t from = b * 8 > v->offset ? b * 8 : v->offset;
        size_t to = (b + 1) * 8 < end ? (b + 1) * 8 : end;
        if (memcmp(np->reasm.data + from, v->payload + (from - v->offset), to - from) != 0) {
            reasm_drop(np);
            np->counts.malformed++;
            return NETPOLL_IGNORE;
        }
    }
    memcpy(np->reasm.data + v->offset, v->payload, v->payload_len);
    for (size_t b = first; b < last; b++)
        np->reasm.have[b / 8] |= (uint8_t)(1u << (b % 8));
    if (v->offset == 0)
        memcpy(np->reasm.src_mac, src_mac, 6);
    np->counts.fragments++;
    if (!np->reasm.total)
        return NETPOLL_HELD;
    for (size_t b = 0; b < (np->reasm.total + 7) / 8; b++)
        if (!have_block(np, b))
            return NETPOLL_HELD;
    np->reasm.active = false;
    np->counts.reassembled++;
    return udp_accept(np, v->src, np->reasm.src_mac, np->reasm.data, np->reasm.total, dg);
}

enum netpoll_verdict netpoll_receive(struct netpoll *np, const uint8_t *frame, size_t len, int64_t now_ns,
                                     struct netpoll_datagram *dg, uint8_t reply[NETPOLL_FRAME_MIN],
                                     size_t *reply_len)
{
    np->counts.frames++;
    if (len < NETPOLL_ETH_HEADER) {
        np->counts.malformed++;
        return NETPOLL_IGNORE;
    }
    uint16_t type = get16(frame + 12);
    if (type == ETHERTYPE_ARP)
        return arp_receive(np, frame, len, now_ns, reply, reply_len);
    if (type != ETHERTYPE_IPV4) {
        np->counts.not_ours++;
        return NETPOLL_IGNORE;
    }
    struct ip_view v = { 0 };
    bool udp = ip_parse(np, frame, len, &v, true);
    if (!v.payload && !udp)
        return NETPOLL_IGNORE; /* malformed or bad checksum, counted */
    if (!udp || np->ip == 0 || v.dst != np->ip) {
        np->counts.not_ours++;
        return NETPOLL_IGNORE;
    }
    if (group_mac(frame + 6) || netpoll_source_refused(v.src, np->ip, np->netmask)) {
        np->counts.hostile_source++;
        return NETPOLL_IGNORE;
    }
    if (v.more || v.offset)
        return fragment_receive(np, frame + 6, &v, now_ns, dg);
    return udp_accept(np, v.src, frame + 6, v.payload, v.payload_len, dg);
}

bool netpoll_wants(const struct netpoll *np, const uint8_t *frame, size_t len)
{
    struct ip_view v = { 0 };
    if (np->ip == 0 || len < NETPOLL_ETH_HEADER || get16(frame + 12) != ETHERTYPE_IPV4 ||
        !ip_parse((struct netpoll *)np, frame, len, &v, false) || v.dst != np->ip)
        return false;
    if (v.offset == 0)
        return v.payload_len >= 4 && get16(v.payload + 2) == np->port;
    return np->reasm.active && np->reasm.src == v.src && np->reasm.id == v.id;
}

/* ---- send ---------------------------------------------------------------------------------------------- */

static void ip_header(uint8_t *ip, uint32_t src, uint32_t dst, uint16_t id, size_t payload_len, size_t offset,
                      bool more)
{
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, (uint16_t)(NETPOLL_IP_HEADER + payload_len));
    put16(ip + 4, id);
    put16(ip + 6, (uint16_t)((more ? IP_FLAG_MF : 0) | (offset / 8)));
    ip[8] = IP_TTL;
    ip[9] = IP_PROTO_UDP;
    put16(ip + 10, 0);
    put32(ip + 12, src);
    put32(ip + 16, dst);
    put16(ip + 10, netpoll_fold(netpoll_sum(0, ip, NETPOLL_IP_HEADER)));
}

bool netpoll_send_udp(struct netpoll *np, const uint8_t dst_mac[6], uint32_t dst_ip, uint16_t dst_port,
                      const uint8_t *data, size_t len, uint8_t scratch[NETPOLL_FRAME_MAX], netpoll_emit_fn emit,
                      void *arg)
{
    if (len > NETPOLL_UDP_MAX)
        return false;
    size_t udp_len = NETPOLL_UDP_HEADER + len;
    uint8_t udp[NETPOLL_UDP_HEADER];
    put16(udp, np->port);
    put16(udp + 2, dst_port);
    put16(udp + 4, (uint16_t)udp_len);
    put16(udp + 6, 0);
    uint32_t sum = netpoll_sum(pseudo_header_sum(np->ip, dst_ip, udp_len), udp, NETPOLL_UDP_HEADER);
    uint16_t check = netpoll_fold(netpoll_sum(sum, data, len));
    put16(udp + 6, check ? check : 0xffff); /* 0 would mean "no checksum" */
    uint16_t id = np->next_id++;

    /* The IPv4 payload is the UDP header then data; it goes out in FRAGMENT_PAYLOAD pieces. */
    for (size_t offset = 0; offset < udp_len;) {
        size_t piece = udp_len - offset;
        if (piece > FRAGMENT_PAYLOAD)
            piece = FRAGMENT_PAYLOAD;
        bool more = offset + piece < udp_len;
        memcpy(scratch, dst_mac, 6);
        memcpy(scratch + 6, np->mac, 6);
        put16(scratch + 12, ETHERTYPE_IPV4);
        uint8_t *ip = scratch + NETPOLL_ETH_HEADER;
        ip_header(ip, np->ip, dst_ip, id, piece, offset, more);
        uint8_t *out = ip + NETPOLL_IP_HEADER;
        /* Only the first piece holds the UDP header (it is shorter than any piece); the rest is data. */
        size_t header = offset < NETPOLL_UDP_HEADER ? NETPOLL_UDP_HEADER - offset : 0;
        if (header > piece)
            header = piece;
        if (header)
            memcpy(out, udp + offset, header);
        memcpy(out + header, data + (offset + header - NETPOLL_UDP_HEADER), piece - header);
        size_t frame_len = NETPOLL_ETH_HEADER + NETPOLL_IP_HEADER + piece;
        if (frame_len < NETPOLL_FRAME_MIN) {
            memset(scratch + frame_len, 0, NETPOLL_FRAME_MIN - frame_len);
            frame_len = NETPOLL_FRAME_MIN;
        }
        if (!emit(arg, scratch, frame_len))
            return false;
        offset += piece;
    }
    return true;
}
