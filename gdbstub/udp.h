/* gdbstub/udp.h: the gdb remote protocol over UDP, polled (gdb: `target remote udp:HOST:PORT`) -- the
 * struct gdb_transport the stub runs on when gdb.udp=PORT is given, beside COM2. The card is driven directly
 * (kernel/net/netpoll.h for the frames): no interrupts, no lwIP, no network task while the machine is stopped.
 * gdbstub/udp_nic.c wires it to the real card and the network task; the host tests and the fuzz target
 * drive this file through struct gdb_udp_port.
 *
 * Rules (docs/gdb.md says them for users):
 *   peer      One peer (address and port) at a time: the first whose datagram gets through the UDP shell's
 *             allowlist and gdb_udp_open (gdbstub/udp_auth.h). Datagrams from anyone else are ignored
 *             until the peer detaches (D, k) or has sent nothing for GDB_UDP_PEER_IDLE_NS. A peer is proven
 *             when its datagrams carry its session nonce (KPG1, keyed or plain); in the insecure mode
 *             (gdb.udp.insecure) nobody ever is.
 *   hellos    A KPG1 hello is answered (GDB_UDP_NONCE_LEN bytes, within 3x) only with a token: the proven
 *             peer has its own bucket (GDB_UDP_PEER_HELLO_RATE a second), everyone else shares one
 *             (GDB_UDP_NEWCOMER_HELLO_RATE).
 *   unproven  From a sender nothing proves, nothing that looks like a stub's own reply is taken (a lone `-`,
 *             `$OK`, `$Enn`, `$#00`, after any acks), and a newcomer opens only as a debugger does: Ctrl-C, or a
 *             `?`, `q...` or `QStartNoAckMode` packet. Two stubs, or a stub and an echo, cannot keep
 *             answering each other.
 *   running   While the machine runs, only a datagram that is exactly Ctrl-C, or one well-formed packet with a
 *             good checksum (after any acks), asks for a stop; anything else is dropped, so garbage sent to
 *             the port changes nothing. The same holds for a newcomer's first datagram during a session.
 *   repeats   gdb keeps ack mode and retransmits a packet it saw no answer to. A datagram equal to the last
 *             packet the stub acknowledged, arriving before any other datagram from the peer (gdb's `+` for
 *             our reply), is not executed again: the stub's ack and reply to it are sent again instead (gdb
 *             discards a reply it already has). A duplicated `s` steps once. The answer is sent again
 *             once per packet at most, and to an unproven sender only when it keeps to the 3x budget of the
 *             datagram that asked (headers counted); otherwise the repeat is dropped. A packet that came in
 *             several datagrams (the relay's pieces, below) is not remembered whole: sent again, it runs again
 *             (such packets are memory writes, which then write the same bytes twice).
 *   replies   go to the MAC an ARP answer to our own question gave for the peer's address (off the subnet:
 *             the gateway's), never to a request's Ethernet source; unknown, the question goes out and the
 *             reply does not (gdb retransmits; a session's start first waits GDB_UDP_ARP_WAIT_NS for it).
 *             Broadcast, multicast and other hostile sources are dropped by netpoll.
 *   fragments Under KPG1 no fragment is reassembled (netpoll's admission says no, counted as not admitted):
 *             the relay cuts gdb's bytes into datagrams that need none, so a forged fragment with the peer's
 *             address cancels nothing. In the insecure mode the attached peer's are (gdb's own `udp:` sends
 *             a packet of PacketSize in one datagram).
 *   datagrams What the stub writes is gathered and sent at each flush (the end of every packet and ack) in
 *             datagrams of at most GDB_UDP_DATAGRAM_MAX bytes of gdb data: gdb reads a UDP socket into a
 *             buffer of BUFSIZ (8192) bytes, and the rest of a longer datagram would be lost.
 *
 * Callers: gdb_udp_frame only from inside the card's poll (whose one-caller rule serialises it), and the
 * transport's hooks only from the stub's session, with every other CPU parked. */
#ifndef GDBSTUB_UDP_H
#define GDBSTUB_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/target.h"
#include "gdbstub/udp_auth.h"
#include "kernel/net/netpoll.h"

#define GDB_UDP_DATAGRAM_MAX 8192
#define GDB_UDP_PEER_IDLE_NS (60 * 1000000000ll)
/* How long a flush keeps trying a transmit ring that is full before the datagram is given up (gdb
 * retransmits). */
#define GDB_UDP_TX_WAIT_NS (200 * 1000000ll)
/* A session whose card stays unusable this long -- its receive side held (NETDEV_POLL_BUSY) or every
 * datagram refused by a transmit lock someone holds -- because a CPU was stopped inside the driver ends as a
 * lost link: breakpoints out, the machine resumes (and the driver with it), and gdb's next retransmission
 * attaches afresh. Better than a machine stopped for good. */
#define GDB_UDP_CARD_STUCK_NS (3 * 1000000000ll)
#define GDB_UDP_TX_STUCK_DATAGRAMS 8
/* How long a session's start polls for the ARP answer that tells where the peer is (udp.c,
 * await_peer_neighbour): clients that never retransmit their first packet then get its answer. */
#define GDB_UDP_ARP_WAIT_NS 1000000000ll
/* Hello answers a second (and the burst). The proven peer's own bucket is small: a relay asks again only after a
 * reboot or a lost answer. Everyone else's shared one is large, since every newcomer's first hello draws on it:
 * a blind forger sending F hellos a second leaves a real relay's hello a chance of about RATE/F per try (at 8 a
 * second, 100 forged hellos a second kept most relays from a nonce for 30 s). What it bounds is the CPU a flood
 * buys (two HMACs and a datagram per answer: `make bench`, newcomer_cost) and what it reflects (3x the bytes
 * that asked, per answer). */
#define GDB_UDP_PEER_HELLO_RATE 8
#define GDB_UDP_NEWCOMER_HELLO_RATE 2000
/* Received gdb bytes waiting for the stub: two whole packets' worth. */
#define GDB_UDP_RX_RING (2 * GDB_UDP_INNER_MAX + 64)

/* What the transport needs of the machine. */
struct gdb_udp_port {
    /* Hands one frame to the card without ever waiting (try-lock): false when it cannot now. */
    bool (*transmit)(const uint8_t *frame, size_t len);
    /* Reads up to budget frames off the card into gdb_udp_frame; returns how many it took, or a negative
     * number when someone else is inside the card's poll (NETDEV_POLL_BUSY). */
    int (*poll)(int budget);
    /* The UDP shell's allowlist. */
    bool (*permits)(uint32_t ip);
    int64_t (*now_ns)(void);
    void (*relax)(void);
    /* A session on this transport begins (true) or ends: the card's receive interrupt goes off for it (the
     * stub polls) and back on after. NULL: nothing to do. */
    void (*session)(bool begin);
};

struct gdb_udp_counts {
    uint64_t datagrams_in, datagrams_out;
    uint64_t not_allowed;  /* outside the allowlist */
    uint64_t not_peer;     /* from someone other than the peer */
    uint64_t dropped_open; /* gdb_udp_open said DROP */
    uint64_t dropped_idle; /* while running: neither Ctrl-C nor one good packet */
    uint64_t repeats;      /* repeats of the last packet answered again instead of run */
    uint64_t repeats_dropped; /* repeats not answered: once already, or over an unproven sender's budget */
    uint64_t reply_looking;   /* from an unproven sender, looked like a stub's reply: dropped */
    uint64_t hellos_limited;  /* hellos over their bucket: dropped before any HMAC */
    uint64_t rx_overflow;  /* datagrams that did not fit the receive ring */
    uint64_t tx_failed;    /* datagrams the card would not take in time */
    uint64_t card_stuck;   /* sessions ended because the card stayed unusable (GDB_UDP_CARD_STUCK_NS) */
    uint64_t stops;        /* stops asked for */
    uint64_t peers;        /* peers taken on */
};

enum gdb_udp_stop { GDB_UDP_NO_STOP, GDB_UDP_STOP_ATTACH, GDB_UDP_STOP_INTERRUPT };

/* port_number 1..65535. The address comes later (gdb_udp_set_address). Resets everything. */
void gdb_udp_init(const struct gdb_udp_port *port, const uint8_t mac[6], uint16_t port_number);
bool gdb_udp_enabled(void);
uint16_t gdb_udp_port_number(void);
/* Our IPv4 address (host order), once DHCP or ip= gave one; 0: not up. */
void gdb_udp_set_address(uint32_t ip);
/* The subnet's netmask and the gateway (host order; 0: not known / none), for where replies go: on the
 * subnet to the peer's MAC, off it to the gateway's, both from ARP (netpoll_route). */
void gdb_udp_set_route(uint32_t netmask, uint32_t gateway);
uint32_t gdb_udp_address(void);

/* Whether frame is for the debugger (netpoll_wants): the network task hands such frames to gdb_udp_frame
 * instead of lwIP. */
bool gdb_udp_wants(const uint8_t *frame, size_t len);
/* Whether frame is the ARP answer to a question the debugger asked (netpoll_wants_arp): the network task hands
 * it to gdb_udp_frame and to lwIP as well. */
bool gdb_udp_wants_arp(const uint8_t *frame, size_t len);
/* One received frame: ARP for our address is answered, ARP answers to our questions learned, datagrams to the port judged as above. */
void gdb_udp_frame(const uint8_t *frame, size_t len);
/* A stop that a datagram asked for while the machine ran; reading it clears it. */
enum gdb_udp_stop gdb_udp_take_stop(void);

extern const struct gdb_transport gdb_udp_transport;

void gdb_udp_get_counts(struct gdb_udp_counts *out, struct netpoll_counts *frames);
/* Whether a peer is attached, and which (for `net`). */
bool gdb_udp_peer(uint32_t *ip, uint16_t *port);

#endif
