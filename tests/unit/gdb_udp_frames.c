/* tests/unit/gdb_udp_frames.c: queues of frames for the gdb UDP transport's fake cards (gdb_udp_frames.h). */
#include <string.h>

#include "tests/unit/gdb_udp_frames.h"

bool frames_push(struct frames *q, const uint8_t *frame, size_t len)
{
    if (q->count >= QUEUE || len > NETPOLL_FRAME_MAX)
        return false;
    memcpy(q->bytes[q->count], frame, len);
    q->len[q->count++] = len;
    return true;
}

int frames_poll(struct frames *q, int budget)
{
    int n = 0;
    while (n < budget && q->next < q->count) {
        size_t i = q->next++;
        gdb_udp_frame(q->bytes[i], q->len[i]);
        n++;
    }
    return n;
}

enum gdb_udp_stop frames_hand_over(struct frames *q)
{
    while (q->next < q->count) {
        size_t i = q->next++;
        if (gdb_udp_wants(q->bytes[i], q->len[i]))
            gdb_udp_frame(q->bytes[i], q->len[i]);
    }
    return gdb_udp_take_stop();
}
