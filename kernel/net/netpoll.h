/* kernel/net/netpoll.h: Ethernet, ARP, IPv4 and UDP without lwIP, for a debugger that drives the card itself
 * (the way Linux netpoll and iPXE's gdbudp do): judge one received frame -- strictly, every byte may be hostile
 * -- answer ARP requests for our address, accept IPv4/UDP to our address and port (checksums checked, and
 * required), drop hostile sources (addresses no sender can hold, group Ethernet sources), reassemble one
 * fragmented datagram at a time from a source the owner admits, resolve where a datagram we send goes (a
 * small neighbour table filled only by ARP replies to our own requests: never a frame's source address), and
 * build the frames of a datagram we send, fragmented when it does not fit one frame. Pure: the caller owns the card, the clock and the state (struct netpoll), so the
 * host tests and the fuzz target drive all of it. No locks, no allocation: one caller at a time.
 *
 * Addresses and ports are host order (10.0.2.15 is 0x0a00020f). */
#ifndef KERNEL_NET_NETPOLL_H
#define KERNEL_NET_NETPOLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETPOLL_ETH_HEADER 14
#define NETPOLL_IP_HEADER 20  /* what we send: no options */
#define NETPOLL_UDP_HEADER 8
#define NETPOLL_MTU 1500
#define NETPOLL_FRAME_MAX (NETPOLL_ETH_HEADER + NETPOLL_MTU)
#define NETPOLL_FRAME_MIN 60  /* without the frame check sequence: shorter frames are padded */
/* The largest UDP payload received (after reassembly) or sent: the most an IPv4 datagram can carry (65535
 * less the IPv4 and UDP headers), which holds a gdb packet of the stub's PacketSize and what
 * gdbstub/udp_auth.h may wrap around it. */
#define NETPOLL_UDP_MAX 65507
/* A datagram whose fragments have not all come within this long is forgotten. */
#define NETPOLL_REASSEMBLY_NS 2000000000ll
/* Neighbours (where to send): a few entries, each asked for at most once per NETPOLL_ARP_RETRY_NS, an answer
 * taken only within NETPOLL_ARP_ANSWER_NS of our request, and forgotten NETPOLL_NEIGHBOUR_NS after it came. */
#define NETPOLL_NEIGHBOURS 4
#define NETPOLL_ARP_RETRY_NS (200 * 1000000ll)
#define NETPOLL_ARP_ANSWER_NS 2000000000ll
#define NETPOLL_NEIGHBOUR_NS (60 * 1000000000ll)

struct netpoll_counts {
    uint64_t frames;        /* frames judged */
    uint64_t arp_replies;   /* ARP requests for our address answered */
    uint64_t datagrams;     /* UDP datagrams to our address and port accepted (whole or reassembled) */
    uint64_t fragments;     /* fragments kept for reassembly */
    uint64_t reassembled;   /* datagrams made whole from fragments */
    uint64_t malformed;     /* truncated or impossible headers, bad lengths */
    uint64_t bad_checksum;  /* IPv4 header or UDP checksum wrong, or no UDP checksum (0: "none") */
    uint64_t not_ours;      /* well formed, but another address, port, protocol or ARP question */
    uint64_t reassembly_dropped; /* fragment sets given up: overlap with different bytes, oversize, replaced
                                  * by another datagram, or timed out */
    uint64_t hostile_source; /* from an address no sender holds (netpoll_source_refused) or a group MAC */
    uint64_t not_admitted;   /* fragments from a source the owner does not let reassemble */
    uint64_t arp_requests;   /* ARP requests we built to find a neighbour */
    uint64_t neighbours;     /* ARP replies to our requests taken (neighbours learned) */
};

/* Whether the owner lets src (host order) have fragments reassembled (the debugger: only an insecure-mode peer,
 * gdbstub/udp.c may_reassemble). */
typedef bool (*netpoll_admit_fn)(void *arg, uint32_t src);

struct netpoll_neighbour {
    uint32_t ip;            /* 0: a free entry */
    bool known;             /* mac holds the answer, learned at learned_ns */
    uint8_t mac[6];
    int64_t learned_ns;
    int64_t asked_ns;       /* our last request for ip; 0: none outstanding */
};

struct netpoll {
    /* Set by the owner. */
    uint8_t mac[6];
    uint32_t ip;            /* 0: no address yet -- nothing is ours, ARP is not answered */
    uint16_t port;          /* the UDP port we accept */
    uint32_t netmask;       /* 0: not known (every address is on the link, no subnet broadcast) */
    uint32_t gateway;       /* where off-subnet datagrams go; 0: none (they are not sent) */
    netpoll_admit_fn admit; /* NULL: no source may reassemble (fragments are dropped) */
    void *admit_arg;
    /* State. */
    struct netpoll_neighbour neighbours[NETPOLL_NEIGHBOURS];
    uint16_t next_id;       /* IPv4 identification of the next datagram sent */
    struct {
        bool active;
        uint32_t src;
        uint16_t id;
        uint16_t src_port;  /* 0 until the first fragment (the one with the UDP header) came */
        uint8_t src_mac[6];
        size_t total;       /* the IPv4 payload's length, 0 until the last fragment came */
        int64_t started_ns;
        uint8_t have[(NETPOLL_UDP_HEADER + NETPOLL_UDP_MAX + 7) / 8 / 8 + 1]; /* one bit per 8 bytes */
        uint8_t data[NETPOLL_UDP_HEADER + NETPOLL_UDP_MAX];
    } reasm;
    struct netpoll_counts counts;
};

/* What a received frame was. */
enum netpoll_verdict {
    NETPOLL_IGNORE,    /* not for us, or bad (counted): nothing to do */
    NETPOLL_REPLY,     /* an ARP request for our address: send the reply netpoll_receive built */
    NETPOLL_HELD,      /* a fragment of a datagram to us, kept until the rest comes */
    NETPOLL_DATAGRAM,  /* a whole UDP datagram to our address and port, in *dg */
};

struct netpoll_datagram {
    uint32_t src_ip;
    uint16_t src_port;
    uint8_t src_mac[6];     /* the Ethernet source, for the record: replies go where netpoll_route says */
    const uint8_t *data;    /* the payload: into the frame, or into np's reassembly buffer; valid until the
                             * next netpoll_receive */
    size_t len;
};

void netpoll_init(struct netpoll *np, const uint8_t mac[6], uint32_t ip, uint16_t port);

/* Judges frame (len bytes, without the frame check sequence) received at now_ns. REPLY: reply holds
 * *reply_len bytes to send (reply has room for NETPOLL_FRAME_MIN); DATAGRAM: *dg describes it. */
enum netpoll_verdict netpoll_receive(struct netpoll *np, const uint8_t *frame, size_t len, int64_t now_ns,
                                     struct netpoll_datagram *dg, uint8_t reply[NETPOLL_FRAME_MIN],
                                     size_t *reply_len);

/* Whether frame is an ARP reply to our address from an address we asked about (netpoll_route): the network
 * task shows it to the debugger and to lwIP alike (lwIP may be asking too). */
bool netpoll_wants_arp(const struct netpoll *np, const uint8_t *frame, size_t len);

/* Whether frame is IPv4/UDP to our address and port, or a fragment that may belong to such a datagram (one
 * whose first fragment named our port, or any later fragment from the source of the datagram being
 * reassembled): a cheap look, checksums not checked, for the network task to hand such frames to the
 * debugger before lwIP sees them. */
bool netpoll_wants(const struct netpoll *np, const uint8_t *frame, size_t len);

/* Where a datagram to dst goes. On the subnet (or no netmask known) dst's own MAC, off it the gateway's, as
 * learned from an ARP reply to our own request. KNOWN: mac holds it. REFRESH: mac holds it, and request an ARP
 * request to send now (the entry is past half its life). ASK: request holds an ARP request (NETPOLL_FRAME_MIN
 * bytes) to send now; nothing to send the datagram to yet (the sender retransmits). WAIT: asked within
 * NETPOLL_ARP_RETRY_NS; nothing to do. NONE: no address of ours, dst unusable (netpoll_source_refused) or off
 * the subnet with no gateway. */
enum netpoll_route {
    NETPOLL_ROUTE_KNOWN,
    NETPOLL_ROUTE_REFRESH,
    NETPOLL_ROUTE_ASK,
    NETPOLL_ROUTE_WAIT,
    NETPOLL_ROUTE_NONE,
};
enum netpoll_route netpoll_route(struct netpoll *np, uint32_t dst, int64_t now_ns, uint8_t mac[6],
                                 uint8_t request[NETPOLL_FRAME_MIN]);

/* Whether ip can be no honest sender's or receiver's address, seen from own/netmask (host order): 0.0.0.0,
 * 255.255.255.255, multicast 224/4, class E 240/4, loopback 127/8, own itself, and the subnet's broadcast
 * address (netmask known and the subnet /30 or larger). kernel/net/allowlist.c refuses these too. */
bool netpoll_source_refused(uint32_t ip, uint32_t own, uint32_t netmask);

/* Sends data (len up to NETPOLL_UDP_MAX) from our port to dst_ip:dst_port at Ethernet dst_mac, through
 * emit(arg, frame, frame_len) once per frame -- one frame, or IPv4 fragments in order when it does not fit.
 * scratch (NETPOLL_FRAME_MAX bytes) holds each frame while emit runs. False when len is too long or emit
 * refused a frame (the rest is not sent). */
typedef bool (*netpoll_emit_fn)(void *arg, const uint8_t *frame, size_t len);
bool netpoll_send_udp(struct netpoll *np, const uint8_t dst_mac[6], uint32_t dst_ip, uint16_t dst_port,
                      const uint8_t *data, size_t len, uint8_t scratch[NETPOLL_FRAME_MAX], netpoll_emit_fn emit,
                      void *arg);

/* The Internet checksum's one's-complement sum of len bytes, folded into sum (for tests and builders). */
uint32_t netpoll_sum(uint32_t sum, const uint8_t *data, size_t len);
uint16_t netpoll_fold(uint32_t sum);

#endif
