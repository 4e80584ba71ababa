/* kernel/drivers/net/virtio_net_desc.h: what a virtio-net card wrote into a used ring, judged -- pure functions
 * with no hardware behind them, so the host can feed them garbage (tests/unit/test_nic_desc.c,
 * tests/fuzz/fuzz_nic_desc.c). The driver (kernel/drivers/net/virtio_net.c) posts buffer slot i as the two-descriptor
 * chain headed by descriptor 2i: the virtio_net_hdr alone, then the frame room straight after it. */
#ifndef KERNEL_DRIVERS_NET_VIRTIO_NET_DESC_H
#define KERNEL_DRIVERS_NET_VIRTIO_NET_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum virtio_rx_verdict {
    VIRTIO_RX_FRAME,     /* a frame: *frame_len bytes after the header; the slot goes back to the card */
    VIRTIO_RX_BAD_LEN,   /* our chain, but the length is impossible: dropped, the slot goes back */
    VIRTIO_RX_BAD_ID,    /* not a chain head we posted: nothing to give back */
};

/* A used element (id, len) of the receive queue, for slots receive slots of slot_size bytes whose header is
 * hdr_len bytes. *slot is set for FRAME and BAD_LEN. A frame shorter than an Ethernet header or longer than
 * the slot's room is BAD_LEN. */
enum virtio_rx_verdict virtio_net_rx_judge(uint32_t id, uint32_t len, unsigned slots, size_t hdr_len,
                                           size_t slot_size, unsigned *slot, size_t *frame_len);

/* A used element's id on the transmit queue: true, with *slot, when it heads a chain we posted and the slot is
 * in flight (in_flight[slot]); false for anything else (counted as a transmit error, nothing reclaimed). */
bool virtio_net_tx_judge(uint32_t id, unsigned slots, const bool *in_flight, unsigned *slot);

#endif
