/* kernel/drivers/net/virtqueue.h: a virtio split virtqueue as the driver side sees it -- the descriptor table, the
 * available ring the driver fills and the used ring the device fills, in one zeroed, page-aligned block laid
 * out as the legacy interface requires (descriptors, available ring, then the used ring on the next 4096
 * boundary; a modern device is told the three addresses and takes the same layout). Both virtio-net transports
 * use it (kernel/drivers/net/virtio_net.c). No locks: each queue has one user at a time, which the caller ensures. */
#ifndef KERNEL_DRIVERS_NET_VIRTQUEUE_H
#define KERNEL_DRIVERS_NET_VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIRTQ_DESC_F_NEXT 1
#define VIRTQ_DESC_F_WRITE 2
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY 1
#define VIRTQ_SIZE_MAX 32768 /* the spec's largest queue */

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_avail {
    _Atomic uint16_t flags;
    _Atomic uint16_t idx;
    uint16_t ring[]; /* size entries, then used_event (unused: no EVENT_IDX) */
};

struct virtq_used_elem {
    uint32_t id;  /* head descriptor of the finished chain */
    uint32_t len; /* bytes the device wrote into it */
};

struct virtq_used {
    _Atomic uint16_t flags;
    _Atomic uint16_t idx;
    struct virtq_used_elem ring[]; /* size entries, then avail_event */
};

struct virtq {
    uint16_t index;     /* the device's queue number */
    uint16_t size;      /* entries: a power of two */
    struct virtq_desc *desc;
    struct virtq_avail *avail;
    struct virtq_used *used;
    uint16_t avail_idx; /* the next available-ring index the driver publishes */
    uint16_t last_used; /* the next used-ring index the driver reads */
};

/* The block's size for size entries, and where the used ring starts in it. */
size_t virtq_bytes(uint16_t size, size_t *used_offset);
/* Allocates and zeroes the block for a queue of size entries (a power of two, 2..VIRTQ_SIZE_MAX; false
 * otherwise, or without memory). */
bool virtq_alloc(struct virtq *vq, uint16_t index, uint16_t size);
void virtq_free(struct virtq *vq);

/* Makes the chain headed by descriptor head available (not yet published). */
void virtq_offer(struct virtq *vq, uint16_t head);
/* Lets the device see what virtq_offer added. */
void virtq_publish(struct virtq *vq);
/* After publishing: whether the device wants a notification (it has not set NO_NOTIFY). */
bool virtq_needs_notify(struct virtq *vq);
/* The next element the device has finished, consumed; false when there is none. */
bool virtq_next_used(struct virtq *vq, struct virtq_used_elem *out);
/* Asks the device for interrupts on this queue, or not. */
void virtq_set_interrupt(struct virtq *vq, bool on);

#endif
