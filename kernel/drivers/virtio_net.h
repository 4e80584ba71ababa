/* kernel/drivers/virtio_net.h: the virtio network card QEMU gives with
 *     -netdev user,id=n0 -device virtio-net-pci,netdev=n0      (also with disable-modern=on)
 * as the network task sees it: Ethernet frames in and out, a task to wake when frames arrive, and counters.
 *
 * Everything here is for task context. The receive interrupt only moves finished buffers onto a queue and
 * wakes the registered task; that task calls virtio_net_receive(), which hands each frame to the stack and
 * gives the buffer back to the card. One task receives (a second caller at the same time panics); any task
 * may transmit. */
#ifndef KERNEL_DRIVERS_VIRTIO_NET_H
#define KERNEL_DRIVERS_VIRTIO_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct task;

/* The longest frame virtio_net_transmit takes: 14-byte Ethernet header, a 4-byte VLAN tag, 1500 bytes of
 * payload (no frame check sequence; the card adds it). */
#define VIRTIO_NET_FRAME_MAX 1518

struct virtio_net_stats {
    uint64_t rx_packets; /* frames handed to deliver() */
    uint64_t rx_bytes;   /* their Ethernet bytes (the virtio header not counted) */
    uint64_t rx_errors;  /* buffers the card returned with a bad id or a length outside the buffer */
    uint64_t rx_dropped; /* good frames discarded because virtio_net_receive was given no deliver() */
    uint64_t tx_packets; /* frames queued to the card */
    uint64_t tx_bytes;
    uint64_t tx_errors;  /* frames refused for their length, and completions with a bad id */
    uint64_t tx_ring_full; /* frames refused because every transmit buffer was still with the card: the
                            * sender decides whether that is a wait or a loss, so it is not called a drop */
    uint64_t interrupts; /* interrupts that were the card's (its ISR status was non-zero) */
};

/* Finds the card on the PCI bus, negotiates, sets up the receive and transmit queues, routes its interrupt and
 * starts it. Logs one line about the card, or a loud one saying why there is no networking, and returns
 * whether the card is up. Once, from task context; later calls return the first answer when it was true. */
bool virtio_net_probe(void);

/* The task to task_wake() when received frames are waiting (NULL: nobody). The task should call
 * virtio_net_receive after registering, since frames may have arrived before. */
void virtio_net_set_waiter(struct task *task);

/* The card's six-byte MAC address; NULL until virtio_net_probe succeeded. */
const uint8_t *virtio_net_mac(void);

/* Hands up to budget received frames to deliver(arg, frame, len) -- frame is the Ethernet frame, header
 * stripped, valid only during the call -- then gives the buffers back to the card. Returns how many buffers it
 * took; budget means more may be waiting, so call again before blocking. 0 when the card is not up. */
int virtio_net_receive(void (*deliver)(void *arg, const uint8_t *frame, size_t len), void *arg, int budget);

/* Copies one Ethernet frame (1..VIRTIO_NET_FRAME_MAX bytes) into a transmit buffer and starts it. False when
 * the card is not up, the length is wrong (tx_errors) or every transmit buffer is in flight (tx_ring_full). */
bool virtio_net_transmit(const void *frame, size_t len);

/* A snapshot of the counters (all zero when the card is not up). */
void virtio_net_get_stats(struct virtio_net_stats *out);

#endif
