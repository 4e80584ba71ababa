/* tests/unit/gdb_udp_frames.h: queues of Ethernet frames for the gdb UDP transport's fake cards
 * (tests/unit/gdb_udp_fake_card.c, tests/fuzz/fuzz_gdb_udp.c): what waits to be received, handed to the
 * transport as the card's poll or as the network task does while the machine runs. */
#ifndef TESTS_UNIT_GDB_UDP_FRAMES_H
#define TESTS_UNIT_GDB_UDP_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/udp.h"
#include "kernel/net/netpoll.h"

#define QUEUE 160
struct frames {
    size_t count, next; /* queued; the next one to hand over */
    size_t len[QUEUE];
    uint8_t bytes[QUEUE][NETPOLL_FRAME_MAX];
};

/* Queues a copy of frame: false when q is full. */
bool frames_push(struct frames *q, const uint8_t *frame, size_t len);
/* The card's poll: up to budget of q's waiting frames handed to gdb_udp_frame; how many. */
int frames_poll(struct frames *q, int budget);
/* The network task's view while the machine runs: each waiting frame the transport wants handed over, then the
 * stop they asked for. */
enum gdb_udp_stop frames_hand_over(struct frames *q);

#endif
