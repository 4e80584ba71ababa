/* tests/unit/gdb_udp_fake_card.h: the fake machine the gdb UDP transport's host tests run on
 * (tests/unit/gdb_udp_fake_card.c) -- a card whose frames are queues, a clock that moves when read, and gdb's
 * side: a second netpoll that builds gdb's datagrams and reads the stub's back. Shared by test_gdb_udp.c (the
 * transport's rules), test_gdb_udp_unproven.c (the insecure mode's rules for senders nothing proves) and
 * test_gdb_udp_keyed.c (KPG1, keyed and plain). */
#ifndef TESTS_UNIT_GDB_UDP_FAKE_CARD_H
#define TESTS_UNIT_GDB_UDP_FAKE_CARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/udp.h"
#include "kernel/net/netpoll.h"
#include "tests/unit/gdb_udp_frames.h"

#define OUR_IP 0x0a00020f
#define GDB_IP 0x0a000202
#define OTHER_IP 0x0a000203
#define BANNED_IP 0x0b000001
#define GDB_PORT 1234

extern const uint8_t our_mac[6], gdb_mac[6];

extern struct frames to_card, from_card; /* frames waiting for poll; frames transmitted */
extern int64_t clock_ns;
extern bool card_busy;
extern int64_t rx_busy_until; /* poll says NETDEV_POLL_BUSY until then (someone stopped inside it) */
extern bool neighbour_silent; /* gdb's machine does not answer ARP */
extern int rx_interrupt_off;  /* sessions the card's receive interrupt is off for */
extern struct netpoll gdb_side;
extern const struct gdb_udp_port fake_port; /* the transport's view of the fake card and clock */

/* A datagram from ip:port to the stub's port, queued on the card; gdb_sends: from gdb's own. */
void gdb_sends_from(uint32_t ip, uint16_t port, const char *bytes, size_t len);
void gdb_sends(const char *text);
/* The next datagram the stub sent, as gdb receives it (got, got_len); NULL when there is none. */
extern char got[GDB_UDP_INNER_MAX + 1];
extern size_t got_len;
const char *next_reply(void);
/* Everything the stub's getc gives now (polling the card once dry), as a string. */
const char *read_all(void);
void stub_writes(const char *text);
/* A fresh card, clock, transport and gdb side: the transport under secret and key (NULL, 0: plain KPG1), or
 * in the insecure mode (raw gdb bytes). setup: cmocka's, the insecure mode. */
void fake_card_start(const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key, size_t key_len, bool insecure);
int setup(void **state);
/* The network task's view while the machine runs: frames handed over, then the stop they asked for. */
enum gdb_udp_stop running_delivers(void);
void begin(void);
void end(bool gone);
/* While the machine runs, ip (port 40000) sends text: the stop the transport then asks for. */
enum gdb_udp_stop running_delivers_from(uint32_t ip, const char *text);
/* The transport's counters now. */
struct gdb_udp_counts udp_counts(void);
/* The attached peer's address (its port in *port unless NULL); 0 when nobody is attached. */
uint32_t peer_ip(uint16_t *port);
/* Drops every datagram the stub has sent so far, unread. */
void drain_replies(void);
/* gdb sends text in a session; the stub's getc must give exactly it. */
void gdb_sends_and_stub_reads(const char *text);
/* gdb opens (`?`) and the machine stops for it: a session, the opener read. */
void attach(void);
/* attach, and the stub answers the opener; gdb's ack of that answer waits on the card. */
void attach_and_answer(void);

#endif
