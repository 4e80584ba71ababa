/* gdbstub/packet.h: the framing layer of the gdb remote protocol -- `$payload#cs` packets over a byte
 * transport, acknowledged with `+` or refused with `-`, and the hex helpers every layer above uses.
 *
 * Layers: packet (this) < regs (register table, target description) < commands (one packet in, one reply
 * out) < stub (the session). Nothing here knows what a packet means. */
#ifndef GDBSTUB_PACKET_H
#define GDBSTUB_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/target.h"
#include "kernel/lib/hex.h" /* hex_value, hex_lower: for every user of this header */

/* The largest payload either side sends, between `$` and `#`: advertised to gdb as qSupported PacketSize.
 * A memory read answers at most half of it (two hex digits a byte). As large as the largest transport
 * allows -- a UDP datagram (gdbstub/udp.h) of at most 65507 bytes carries a whole packet -- so that
 * a dump over the network takes few round trips. */
#define GDB_PACKET_SIZE 0xFF00

#define GDB_CTRL_C 0x03

/* One connection's buffers. `in` holds the payload of the last packet received, NUL-terminated for
 * convenience -- but X packets carry binary bytes, NULs included, so parse up to in + in_len. `out` is the
 * reply being built, kept after sending for retransmission when gdb answers `-`. Commands write into `out`
 * only through the gdb_out_* helpers, which never write past it. */
struct gdb_link {
    const struct gdb_transport *transport;
    bool packet_started;  /* a `$` arrived while waiting for an ack: the next packet has already begun */
    bool out_overflow;    /* a gdb_out_* call did not fit: the reply is incomplete and must not be sent */
    size_t in_len;
    size_t out_len;
    char in[GDB_PACKET_SIZE + 1];
    char out[GDB_PACKET_SIZE];
};

enum gdb_event {
    GDB_EVENT_PACKET,    /* a packet with a good checksum, acknowledged; payload in link->in */
    GDB_EVENT_TOO_LONG,  /* a packet with a good checksum, acknowledged, longer than GDB_PACKET_SIZE: its
                            payload was dropped (in_len is 0) and it needs an error reply */
    GDB_EVENT_INTERRUPT, /* Ctrl-C (0x03) outside a packet */
    GDB_EVENT_LOST,      /* the transport reported the link gone (getc without timeout returned -1) */
};

void gdb_link_init(struct gdb_link *link, const struct gdb_transport *transport);

/* Waits for the next packet or Ctrl-C. Bytes outside packets (stray acks, line noise) are skipped; a packet
 * with a bad or missing checksum is answered `-` and gdb's retransmission awaited. */
enum gdb_event gdb_link_receive(struct gdb_link *link);

/* Sends link->out as a packet and waits for gdb's `+`, sending it again on each `-`. A `$` in place of the
 * ack means gdb has moved on to its next packet (our ack was lost), which gdb_link_receive then reads.
 * Returns false when the link is lost. A reply that overflowed is replaced by E07 before sending. */
bool gdb_link_send(struct gdb_link *link);
/* Sends link->out as a packet once and waits for no ack: for a reply the debugger may never read (k's), where
 * waiting -- forever, on COM2 -- would keep the machine stopped for nobody. */
void gdb_link_send_once(struct gdb_link *link);

/* Building the reply in link->out. Each appends all or, when it does not fit, nothing (and marks overflow). */
void gdb_out_reset(struct gdb_link *link);
void gdb_out_char(struct gdb_link *link, char c);
void gdb_out_str(struct gdb_link *link, const char *text);
void gdb_out_hex_bytes(struct gdb_link *link, const void *bytes, size_t len);
/* A number in hex without leading zeros ("0" for zero): thread ids, offsets. */
void gdb_out_hex_u64(struct gdb_link *link, uint64_t value);
/* Binary data with gdb's escapes (`}` then the byte xor 0x20 for `$`, `#`, `}` and `*`); appends as many
 * whole bytes of data as fit in the room left and returns how many that was. */
size_t gdb_out_binary(struct gdb_link *link, const void *data, size_t len);
size_t gdb_out_room(const struct gdb_link *link);
/* Reserves the next len bytes of the reply for the caller to fill; NULL (and overflow) when they do not fit. */
char *gdb_out_claim(struct gdb_link *link, size_t len);

/* ---- hex helpers ---- */

/* A digit's value and a value's digit: hex_value and hex_lower (kernel/lib/hex.h). */
/* Writes 2*len hex digits of bytes into dst (no NUL). Returns 2*len. */
size_t hex_encode(char *dst, const void *bytes, size_t len);
/* Turns the first len bytes of buf into 2*len hex digits in place, working from the end so that no byte
 * is overwritten before it is read; buf must have room for 2*len. */
void hex_expand_in_place(char *buf, size_t len);
/* Reads exactly 2*len hex digits from src into len bytes at dst; false (dst partly written) on a non-hex
 * character. dst may be src itself: byte i is written after digits 2i and 2i+1 are read. */
bool hex_decode(void *dst, const char *src, size_t len);

/* A read position in a packet payload that never passes its end. */
struct gdb_cursor {
    const char *p;
    const char *end;
};

/* A hex number of 1 to 16 significant digits (leading zeros allowed); stops at the first non-hex character.
 * False, cursor unmoved, on no digits or a value beyond 64 bits. */
bool cursor_hex(struct gdb_cursor *c, uint64_t *value);
/* Consumes ch if it is next. */
bool cursor_take(struct gdb_cursor *c, char ch);
/* Consumes text if the input continues with it. */
bool cursor_take_str(struct gdb_cursor *c, const char *text);
bool cursor_at_end(const struct gdb_cursor *c);
size_t cursor_left(const struct gdb_cursor *c);

#endif
