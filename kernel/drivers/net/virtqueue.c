/* kernel/drivers/net/virtqueue.c: the split virtqueue's memory and its two indexes (see the header). The orderings
 * are the spec's: descriptors and ring entries are written before the index that publishes them, and what the
 * device wrote is read only after the index that says it is there. */
#include "kernel/drivers/net/virtqueue.h"

#include "hal/pci.h"
#include "kernel/heap.h"
#include "kernel/lib/string.h"

#include <stdatomic.h>

#define LEGACY_PAGE 4096

_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc is 16 bytes");
_Static_assert(sizeof(struct virtq_avail) == 4 && sizeof(_Atomic uint16_t) == 2, "virtq_avail header");
_Static_assert(sizeof(struct virtq_used_elem) == 8 && sizeof(struct virtq_used) == 4, "virtq_used header");

static size_t align_page(size_t n) { return (n + LEGACY_PAGE - 1) & ~(size_t)(LEGACY_PAGE - 1); }

size_t virtq_bytes(uint16_t size, size_t *used_offset)
{
    *used_offset = align_page(sizeof(struct virtq_desc) * size + sizeof(struct virtq_avail) +
                              sizeof(uint16_t) * (size + 1u));
    return *used_offset +
           align_page(sizeof(struct virtq_used) + sizeof(struct virtq_used_elem) * size + sizeof(uint16_t));
}

bool virtq_alloc(struct virtq *vq, uint16_t index, uint16_t size)
{
    *vq = (struct virtq){ 0 };
    if (size < 2 || size > VIRTQ_SIZE_MAX || (size & (size - 1)))
        return false;
    size_t used_offset;
    size_t bytes = virtq_bytes(size, &used_offset);
    uint8_t *mem = kmalloc_aligned(bytes, LEGACY_PAGE);
    if (!mem)
        return false;
    memset(mem, 0, bytes);
    *vq = (struct virtq){
        .index = index,
        .size = size,
        .desc = (struct virtq_desc *)mem,
        .avail = (struct virtq_avail *)(mem + sizeof(struct virtq_desc) * size),
        .used = (struct virtq_used *)(mem + used_offset),
    };
    return true;
}

void virtq_free(struct virtq *vq)
{
    if (vq->desc)
        kfree(vq->desc);
    *vq = (struct virtq){ 0 };
}

void virtq_offer(struct virtq *vq, uint16_t head)
{
    vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
    vq->avail_idx++;
}

void virtq_publish(struct virtq *vq)
{
    /* release: the descriptors and ring entries are written before the device can see the new index */
    atomic_store_explicit(&vq->avail->idx, vq->avail_idx, memory_order_release);
}

bool virtq_needs_notify(struct virtq *vq)
{
    /* full barrier: the published index is visible before the device's flag is read, or a device that is
     * just going idle could miss both the index and the notification */
    atomic_thread_fence(memory_order_seq_cst);
    return !(atomic_load_explicit(&vq->used->flags, memory_order_relaxed) & VIRTQ_USED_F_NO_NOTIFY);
}

bool virtq_next_used(struct virtq *vq, struct virtq_used_elem *out)
{
    /* acquire: the used element and whatever the device wrote into the buffer are visible once its index is */
    if (vq->last_used == atomic_load_explicit(&vq->used->idx, memory_order_acquire))
        return false;
    *out = vq->used->ring[vq->last_used & (vq->size - 1)];
    vq->last_used++;
    return true;
}

void virtq_set_interrupt(struct virtq *vq, bool on)
{
    atomic_store_explicit(&vq->avail->flags, on ? 0 : VIRTQ_AVAIL_F_NO_INTERRUPT, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
}
