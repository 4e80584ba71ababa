/* kernel/net/netload_proto.h: netload's datagram format and the receiver's accounting, shared by the kernel's
 * `netload` command and (in Python, scripts/kprof_wire.py) the host's scripts/netload.
 *
 * Every datagram starts with a 28-byte header, all integers big-endian (network order):
 *
 *   offset  size  field
 *        0     4  magic, the ASCII bytes "KPNL"
 *        4     4  version, 1
 *        8     8  sequence number: 0 for a run's first datagram, then +1 for each datagram sent
 *       16     8  send time in nanoseconds on the sender's own clock (only the sender may compare it)
 *       24     4  size: the whole datagram in bytes, this header included
 *       28     -  filler up to size: the byte at offset i (from the datagram's start) is i & 0xff
 *
 * A receiver takes a datagram only when it is at least the header long, the magic and version match and size
 * equals the length received. The filler is not checked: UDP's checksum already guards the bytes, and the
 * receiver's cost stays per datagram rather than per byte. An echo sends each datagram back unchanged. */
#ifndef KERNEL_NET_NETLOAD_PROTO_H
#define KERNEL_NET_NETLOAD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sink.h"

#define NETLOAD_MAGIC "KPNL"
#define NETLOAD_VERSION 1
#define NETLOAD_HEADER_SIZE 28
/* The largest size a sender offers: one Ethernet frame (1500 - 20 IP - 8 UDP), never fragmented. */
#define NETLOAD_SIZE_MAX 1472
#define NETLOAD_SIZE_DEFAULT 1024
/* Datagrams per second when a sender is given no rate; 0 given explicitly means as fast as it can. */
#define NETLOAD_PPS_DEFAULT 10000

struct netload_header {
    uint64_t seq;
    uint64_t send_ns;
    uint32_t size;
};

enum netload_decode_result {
    NETLOAD_OK,
    NETLOAD_SHORT,       /* fewer bytes than the header */
    NETLOAD_BAD_MAGIC,
    NETLOAD_BAD_VERSION,
    NETLOAD_BAD_SIZE,    /* the size field is not the length received */
};

/* Writes a whole datagram of size bytes (header and filler) into buf. Returns size, or 0 -- writing
 * nothing -- when size is below NETLOAD_HEADER_SIZE or above cap. */
size_t netload_encode(void *buf, size_t cap, uint64_t seq, uint64_t send_ns, uint32_t size);
/* Rewrites only the sequence number and send time of a datagram netload_encode wrote: a sender fills its
 * buffer once and stamps it per datagram. */
void netload_stamp(void *buf, uint64_t seq, uint64_t send_ns);
/* Checks a received datagram of len bytes and, when it is NETLOAD_OK, fills *out. */
enum netload_decode_result netload_decode(const void *buf, size_t len, struct netload_header *out);

/* Received datagrams are judged against the highest sequence number seen so far, in serial-number
 * arithmetic (a difference below 2^63 is ahead), so counting runs on across a wrap of the 64-bit number.
 * Ahead by one is in order; ahead by more counts the skipped numbers as lost; behind is out of order and,
 * when it was one of the skipped, takes it off lost again -- unless it already arrived, which makes it a
 * duplicate. Whether a number already arrived is remembered for the NETLOAD_WINDOW numbers below the highest;
 * older stragglers are counted out of order and late, and stay in lost. Losses after the last datagram
 * received cannot be seen by the receiver; the sender's count of datagrams sent tells them. */
#define NETLOAD_WINDOW 1024

struct netload_rx_stats {
    uint64_t packets;      /* datagrams accepted, duplicates included */
    uint64_t bytes;        /* their bytes */
    uint64_t lost;         /* sequence numbers skipped and not (yet) arrived */
    uint64_t out_of_order; /* arrived below the highest sequence number then seen */
    uint64_t duplicates;   /* arrived again within the window */
    uint64_t late;         /* out of order and older than the window (a subset of out_of_order) */
    uint64_t invalid;      /* datagrams netload_decode refused (counted by netload_rx_invalid) */
    uint64_t highest;      /* the highest sequence number seen; starts as 0 - 1, the number before the first */
    uint64_t seen[NETLOAD_WINDOW / 64]; /* bit (s % NETLOAD_WINDOW): s arrived, for s in the window */
};

void netload_rx_init(struct netload_rx_stats *s);
/* One accepted datagram of len bytes carrying sequence number seq. */
void netload_rx_account(struct netload_rx_stats *s, uint64_t seq, size_t len);
/* One refused datagram. */
void netload_rx_invalid(struct netload_rx_stats *s);

/* count per second over elapsed_ns, rounded down; 0 when elapsed_ns <= 0. Exact while count * 10^9 fits in
 * 64 bits, to the millisecond beyond. */
uint64_t netload_per_second(uint64_t count, int64_t elapsed_ns);

/* The receiver's report line:
 *   packets P (P/s), bytes B (B/s), lost L, out of order O, duplicates D, invalid I\n */
void netload_report_rx(struct sink *out, const struct netload_rx_stats *s, int64_t elapsed_ns);
/* The sender's report line:
 *   sent packets P (P/s), bytes B (B/s)\n */
void netload_report_tx(struct sink *out, uint64_t packets, uint64_t bytes, int64_t elapsed_ns);

#endif
