/* kernel/drivers/virtio_net.c: the virtio network card, driven through its legacy interface. The QEMU line:
 *
 *     -netdev user,id=n0 -device virtio-net-pci,netdev=n0            (transitional 1af4:1000)
 *     -netdev user,id=n0 -device virtio-net-pci,netdev=n0,disable-modern=on     (legacy only, same id)
 *
 * A transitional card keeps the legacy registers in I/O BAR0 beside its modern capabilities; this driver uses
 * only those (virtio 1.x, "Legacy Interfaces"). A modern-only card (disable-legacy=on, 1af4:1041) is named
 * and refused. The layers, bottom up:
 *
 *   registers   BAR0 ports: features, queue select/size/address/notify, status, ISR, then the MAC
 *   virtqueues  queue 0 receives, queue 1 transmits; each is the legacy layout in one page-aligned block:
 *               descriptor table, available ring, then on the next 4096 boundary the used ring
 *   buffers     2048-byte slots, each two descriptors: the 10-byte virtio_net_hdr alone (the rule without
 *               VIRTIO_F_ANY_LAYOUT), then the frame straight after it in the same slot
 *   interrupt   reads ISR (acknowledging it) and moves finished receive buffers from the used ring onto
 *               rx_ready, a lock-free ring, then wakes the network task: no allocation, lock or printing
 *   receive     the network task takes buffers off rx_ready, hands the frames up and re-posts the buffers
 *   transmit    any task copies a frame into a free slot of a preallocated pool; slots come back as the
 *               card finishes them (reclaimed on the next transmit; the transmit queue raises no interrupt)
 *
 * Only VIRTIO_NET_F_MAC is negotiated: nothing that changes the 10-byte header (no MRG_RXBUF), no offloads. */
#include "kernel/drivers/virtio_net.h"

#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pci.h"
#include "hal/spinlock.h"
#include "kernel/heap.h"
#include "kernel/log.h"
#include "kernel/panic.h"
#include "kernel/string.h"
#include "kernel/task.h"

#include <stdatomic.h>

#define VIRTIO_VENDOR 0x1AF4
#define VIRTIO_NET_TRANSITIONAL 0x1000
#define VIRTIO_NET_MODERN 0x1041

/* Legacy register block in BAR0 (no MSI-X enabled, so the device's own config starts at 0x14). */
#define REG_DEVICE_FEATURES 0x00 /* 32 */
#define REG_DRIVER_FEATURES 0x04 /* 32 */
#define REG_QUEUE_ADDRESS 0x08   /* 32: physical address >> 12 */
#define REG_QUEUE_SIZE 0x0C      /* 16, read-only */
#define REG_QUEUE_SELECT 0x0E    /* 16 */
#define REG_QUEUE_NOTIFY 0x10    /* 16: the queue's index */
#define REG_STATUS 0x12          /* 8 */
#define REG_ISR 0x13             /* 8: reading clears it and lowers the interrupt line */
#define REG_CONFIG 0x14          /* virtio_net_config: mac[6], ... */
#define LEGACY_PAGE 4096

#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FAILED 128

#define ISR_QUEUE 1
#define ISR_CONFIG 2

#define VIRTIO_NET_F_MAC (1u << 5)

#define VRING_DESC_F_NEXT 1
#define VRING_DESC_F_WRITE 2
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define VRING_USED_F_NO_NOTIFY 1

#define RX_QUEUE 0
#define TX_QUEUE 1

#define NET_HDR_LEN 10     /* struct virtio_net_hdr: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset */
#define SLOT_SIZE 2048     /* one buffer: header, then the frame (2038 bytes of room) */
#define RX_SLOTS_MAX 64
#define TX_SLOTS_MAX 64
#define RX_READY_SIZE 64   /* a power of two >= RX_SLOTS_MAX: rx_ready can never overflow */

_Static_assert(RX_READY_SIZE >= RX_SLOTS_MAX && (RX_READY_SIZE & (RX_READY_SIZE - 1)) == 0, "rx_ready size");
_Static_assert(SLOT_SIZE - NET_HDR_LEN >= VIRTIO_NET_FRAME_MAX, "a slot holds the largest frame");

/* ---- the legacy virtqueue layout ------------------------------------------------------------------------- */

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct vring_avail {
    uint16_t flags;
    _Atomic uint16_t idx;
    uint16_t ring[]; /* size entries, then used_event (unused: no EVENT_IDX) */
};

struct vring_used_elem {
    uint32_t id;  /* head descriptor of the finished chain */
    uint32_t len; /* bytes the device wrote into it */
};

struct vring_used {
    _Atomic uint16_t flags;
    _Atomic uint16_t idx;
    struct vring_used_elem ring[]; /* size entries, then avail_event */
};

_Static_assert(sizeof(struct vring_desc) == 16, "virtq_desc is 16 bytes");
_Static_assert(sizeof(struct vring_avail) == 4 && sizeof(_Atomic uint16_t) == 2, "virtq_avail header");
_Static_assert(sizeof(struct vring_used_elem) == 8 && sizeof(struct vring_used) == 4, "virtq_used header");

struct virtqueue {
    uint16_t index;     /* 0 receive, 1 transmit */
    uint16_t size;      /* entries, from the device: a power of two */
    struct vring_desc *desc;
    struct vring_avail *avail;
    struct vring_used *used;
    uint16_t avail_idx; /* the next available-ring index the driver publishes */
    uint16_t last_used; /* the next used-ring index the driver reads */
};

/* ---- driver state ---------------------------------------------------------------------------------------- */

struct counters {
    _Atomic uint64_t rx_packets, rx_bytes, rx_errors, rx_dropped;
    _Atomic uint64_t tx_packets, tx_bytes, tx_errors, tx_ring_full;
    _Atomic uint64_t interrupts;
};

/* A finished receive buffer: the used ring's element as the interrupt found it. */
struct rx_done {
    uint32_t id;
    uint32_t len;
};

static struct {
    struct pci_bar io;
    uint8_t mac[6];
    struct virtqueue rxq, txq;
    uint8_t *rx_slots, *tx_slots; /* SLOT_SIZE each; slot i is descriptors 2i (header) and 2i+1 (frame) */
    unsigned rx_count, tx_count;
    /* Transmit side, under tx_lock: slots free to fill, and which are with the card. */
    spinlock_t tx_lock;
    uint16_t tx_free[TX_SLOTS_MAX];
    unsigned tx_free_count;
    bool tx_in_flight[TX_SLOTS_MAX];
} nic = { .tx_lock = SPINLOCK_INIT };

static atomic_bool nic_up;
static struct counters stats;
static _Atomic(struct task *) waiter;

/* rx_ready: finished receive buffers, filled by whoever holds the harvest (below) and emptied by the one
 * receiving task. tail is written only by the harvester, head only by the receiver. */
static struct rx_done rx_ready[RX_READY_SIZE];
static _Atomic uint32_t rx_ready_head, rx_ready_tail;
/* Harvest requests: the interrupt and the task-side polls both ask; whoever raises it from zero harvests, and
 * passes again while requests keep arriving. One harvester at a time, and nobody ever waits for it. */
static atomic_uint harvest_requests;
/* Set while virtio_net_receive runs: the receiving side is single-consumer. */
static atomic_bool receiving;

/* ---- registers ------------------------------------------------------------------------------------------- */

static uint8_t reg_read8(uint32_t reg) { return pci_bar_read8(&nic.io, reg); }
static uint16_t reg_read16(uint32_t reg) { return pci_bar_read16(&nic.io, reg); }
static uint32_t reg_read32(uint32_t reg) { return pci_bar_read32(&nic.io, reg); }
static void reg_write8(uint32_t reg, uint8_t v) { pci_bar_write8(&nic.io, reg, v); }
static void reg_write16(uint32_t reg, uint16_t v) { pci_bar_write16(&nic.io, reg, v); }
static void reg_write32(uint32_t reg, uint32_t v) { pci_bar_write32(&nic.io, reg, v); }

static void count(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/* ---- virtqueues ------------------------------------------------------------------------------------------ */

static size_t align_page(size_t n) { return (n + LEGACY_PAGE - 1) & ~(size_t)(LEGACY_PAGE - 1); }

/* Selects queue index, sizes it from the device, allocates its zeroed rings and tells the device where. */
static bool queue_setup(struct virtqueue *vq, uint16_t index)
{
    reg_write16(REG_QUEUE_SELECT, index);
    uint16_t size = reg_read16(REG_QUEUE_SIZE);
    if (size < 2 || (size & (size - 1))) {
        log_warn("virtio-net: queue %u has size %u (needs a power of two >= 2) -- networking disabled", index,
                 size);
        return false;
    }
    size_t used_offset = align_page(sizeof(struct vring_desc) * size + sizeof(struct vring_avail) +
                                    sizeof(uint16_t) * (size + 1u));
    size_t bytes = used_offset + align_page(sizeof(struct vring_used) + sizeof(struct vring_used_elem) * size +
                                            sizeof(uint16_t));
    uint8_t *mem = kmalloc_aligned(bytes, LEGACY_PAGE);
    if (!mem) {
        log_warn("virtio-net: no memory for queue %u (%zu bytes) -- networking disabled", index, bytes);
        return false;
    }
    memset(mem, 0, bytes);
    uint64_t phys = pci_dma_address(mem);
    if ((phys >> 12) > 0xFFFFFFFFu) {
        kfree(mem);
        log_warn("virtio-net: queue %u at 0x%llx is beyond the legacy 44-bit queue address -- networking disabled",
                 index, (unsigned long long)phys);
        return false;
    }
    *vq = (struct virtqueue){
        .index = index,
        .size = size,
        .desc = (struct vring_desc *)mem,
        .avail = (struct vring_avail *)(mem + sizeof(struct vring_desc) * size),
        .used = (struct vring_used *)(mem + used_offset),
    };
    reg_write32(REG_QUEUE_ADDRESS, (uint32_t)(phys >> 12));
    return true;
}

/* Makes the chain headed by descriptor head available to the device (not yet published). */
static void queue_offer(struct virtqueue *vq, uint16_t head)
{
    vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
    vq->avail_idx++;
}

/* Lets the device see what queue_offer added. */
static void queue_publish(struct virtqueue *vq)
{
    /* release: the descriptors and ring entries are written before the device can see the new index */
    atomic_store_explicit(&vq->avail->idx, vq->avail_idx, memory_order_release);
}

/* Notifies the device of published buffers, unless it asked not to be. */
static void queue_kick(struct virtqueue *vq)
{
    /* full barrier: the published index is visible before the device's flag is read, or a device that is
     * just going idle could miss both the index and the notification */
    atomic_thread_fence(memory_order_seq_cst);
    if (!(atomic_load_explicit(&vq->used->flags, memory_order_relaxed) & VRING_USED_F_NO_NOTIFY))
        reg_write16(REG_QUEUE_NOTIFY, vq->index);
}

static void slot_descriptors(struct virtqueue *vq, uint8_t *slot, unsigned i, uint16_t write_flag, uint32_t len)
{
    uint64_t addr = pci_dma_address(slot);
    vq->desc[2 * i] = (struct vring_desc){ addr, NET_HDR_LEN, (uint16_t)(VRING_DESC_F_NEXT | write_flag),
                                           (uint16_t)(2 * i + 1) };
    vq->desc[2 * i + 1] = (struct vring_desc){ addr + NET_HDR_LEN, len, write_flag, 0 };
}

/* ---- receive: the interrupt side ------------------------------------------------------------------------- */

/* Moves every finished receive buffer from the used ring onto rx_ready. Only the harvest holder runs this. */
static void harvest_pass(void)
{
    struct virtqueue *vq = &nic.rxq;
    /* acquire: the used elements and the frames the device wrote are visible once its index is */
    uint16_t used_idx = atomic_load_explicit(&vq->used->idx, memory_order_acquire);
    uint32_t tail = atomic_load_explicit(&rx_ready_tail, memory_order_relaxed);
    while (vq->last_used != used_idx) {
        /* acquire: the receiver has finished reading an entry before its place is reused */
        if (tail - atomic_load_explicit(&rx_ready_head, memory_order_acquire) >= RX_READY_SIZE)
            break; /* cannot happen (rx_count <= RX_READY_SIZE); the rest stays in the used ring */
        const struct vring_used_elem *e = &vq->used->ring[vq->last_used & (vq->size - 1)];
        rx_ready[tail & (RX_READY_SIZE - 1)] = (struct rx_done){ e->id, e->len };
        tail++;
        /* release: the entry is written before the receiver can see it */
        atomic_store_explicit(&rx_ready_tail, tail, memory_order_release);
        vq->last_used++;
    }
}

static void harvest(void)
{
    unsigned seen = atomic_fetch_add(&harvest_requests, 1) + 1;
    if (seen != 1)
        return; /* someone is harvesting; it passes again for this request */
    for (;;) {
        harvest_pass();
        if (atomic_compare_exchange_strong(&harvest_requests, &seen, 0))
            return;
        /* seen now holds the requests that arrived during the pass */
    }
}

static bool rx_ready_empty(void)
{
    return atomic_load_explicit(&rx_ready_head, memory_order_acquire) ==
           atomic_load_explicit(&rx_ready_tail, memory_order_acquire);
}

static void harvest_and_wake(void)
{
    harvest();
    struct task *task = atomic_load_explicit(&waiter, memory_order_acquire);
    if (task && !rx_ready_empty())
        task_wake(task);
}

/* The card's interrupt (level-triggered; the line may be shared, so one that is not ours changes nothing). */
static void virtio_net_irq(void *arg)
{
    (void)arg;
    uint8_t isr = reg_read8(REG_ISR); /* acknowledges: the line drops */
    if (!(isr & (ISR_QUEUE | ISR_CONFIG)))
        return;
    count(&stats.interrupts, 1);
    harvest_and_wake();
}

/* ---- receive: the task side ------------------------------------------------------------------------------ */

int virtio_net_receive(void (*deliver)(void *arg, const uint8_t *frame, size_t len), void *arg, int budget)
{
    if (!atomic_load_explicit(&nic_up, memory_order_acquire) || budget <= 0)
        return 0;
    if (atomic_exchange(&receiving, true))
        panic("virtio_net_receive: called while it is already running (one receiving task only)");

    harvest(); /* a missed or late interrupt costs latency, never a frame */
    struct virtqueue *vq = &nic.rxq;
    uint32_t head = atomic_load_explicit(&rx_ready_head, memory_order_relaxed);
    int taken = 0;
    bool reposted = false;
    while (taken < budget) {
        if (head == atomic_load_explicit(&rx_ready_tail, memory_order_acquire))
            break;
        struct rx_done done = rx_ready[head & (RX_READY_SIZE - 1)];
        head++;
        atomic_store_explicit(&rx_ready_head, head, memory_order_release);
        taken++;

        if ((done.id & 1) || done.id >= 2 * nic.rx_count) {
            count(&stats.rx_errors, 1); /* not a chain we posted: nothing to give back */
            continue;
        }
        unsigned slot = done.id / 2;
        if (done.len < NET_HDR_LEN || done.len > SLOT_SIZE) {
            count(&stats.rx_errors, 1);
        } else if (!deliver) {
            count(&stats.rx_dropped, 1);
        } else {
            size_t len = done.len - NET_HDR_LEN;
            count(&stats.rx_packets, 1);
            count(&stats.rx_bytes, len);
            deliver(arg, nic.rx_slots + (size_t)slot * SLOT_SIZE + NET_HDR_LEN, len);
        }
        queue_offer(vq, (uint16_t)(2 * slot));
        queue_publish(vq); /* at once: the card has the buffer back while later frames are handled */
        reposted = true;
    }
    if (reposted)
        queue_kick(vq);
    atomic_store_explicit(&receiving, false, memory_order_release);
    return taken;
}

/* ---- transmit -------------------------------------------------------------------------------------------- */

/* Takes back the transmit slots the card has finished with. tx_lock held. */
static void tx_reclaim(void)
{
    struct virtqueue *vq = &nic.txq;
    uint16_t used_idx = atomic_load_explicit(&vq->used->idx, memory_order_acquire);
    while (vq->last_used != used_idx) {
        uint32_t id = vq->used->ring[vq->last_used & (vq->size - 1)].id;
        vq->last_used++;
        unsigned slot = id / 2;
        if ((id & 1) || slot >= nic.tx_count || !nic.tx_in_flight[slot]) {
            count(&stats.tx_errors, 1);
            continue;
        }
        nic.tx_in_flight[slot] = false;
        nic.tx_free[nic.tx_free_count++] = (uint16_t)slot;
    }
}

bool virtio_net_transmit(const void *frame, size_t len)
{
    if (!atomic_load_explicit(&nic_up, memory_order_acquire))
        return false;
    if (len == 0 || len > VIRTIO_NET_FRAME_MAX) {
        count(&stats.tx_errors, 1);
        return false;
    }
    unsigned long flags = spin_lock_irqsave(&nic.tx_lock);
    tx_reclaim();
    if (nic.tx_free_count == 0) {
        spin_unlock_irqrestore(&nic.tx_lock, flags);
        count(&stats.tx_ring_full, 1);
        return false;
    }
    unsigned slot = nic.tx_free[--nic.tx_free_count];
    nic.tx_in_flight[slot] = true;
    /* The slot's header stays all zero (no offloads): only the frame and its length change. */
    memcpy(nic.tx_slots + (size_t)slot * SLOT_SIZE + NET_HDR_LEN, frame, len);
    nic.txq.desc[2 * slot + 1].len = (uint32_t)len;
    queue_offer(&nic.txq, (uint16_t)(2 * slot));
    queue_publish(&nic.txq);
    queue_kick(&nic.txq);
    spin_unlock_irqrestore(&nic.tx_lock, flags);
    count(&stats.tx_packets, 1);
    count(&stats.tx_bytes, len);
    return true;
}

/* ---- probe ----------------------------------------------------------------------------------------------- */

static const char *const pin_names[] = { "none", "A", "B", "C", "D" };

/* Gives up: a card the handshake has touched is reset (forgetting the queue addresses before their memory
 * goes back to the heap) and marked FAILED. */
static bool fail(const char *why, bool touched)
{
    if (touched) {
        reg_write8(REG_STATUS, 0);
        reg_write8(REG_STATUS, STATUS_FAILED);
    }
    log_warn("virtio-net: %s -- networking disabled", why);
    kfree(nic.rx_slots);
    kfree(nic.tx_slots);
    if (nic.rxq.desc)
        kfree(nic.rxq.desc);
    if (nic.txq.desc)
        kfree(nic.txq.desc);
    nic.rx_slots = nic.tx_slots = 0;
    nic.rxq = nic.txq = (struct virtqueue){ 0 };
    return false;
}

/* A MAC of our own when the card offers none: locally administered, unicast, from the cycle counter. */
static void make_mac(uint8_t mac[6])
{
    uint64_t c = cycles();
    mac[0] = 0x02;
    for (int i = 1; i < 6; i++)
        mac[i] = (uint8_t)(c >> (8 * (i - 1)) ^ c >> (8 * (i + 2)));
}

bool virtio_net_probe(void)
{
    if (atomic_load(&nic_up))
        return true;

    const struct pci_device *dev = pci_find(VIRTIO_VENDOR, VIRTIO_NET_TRANSITIONAL);
    if (!dev) {
        const struct pci_device *modern = pci_find(VIRTIO_VENDOR, VIRTIO_NET_MODERN);
        if (modern)
            log_warn("virtio-net: %02x:%02x.%x is 1af4:1041, modern-only (disable-legacy=on); this driver speaks "
                     "the legacy interface -- drop disable-legacy=on; networking disabled",
                     modern->bus, modern->slot, modern->func);
        else
            log_warn("virtio-net: no device 1af4:1000/1041 on the PCI bus; start QEMU with -netdev user,id=n0 "
                     "-device virtio-net-pci,netdev=n0 -- networking disabled");
        return false;
    }
    if (!pci_read_bar(dev, 0, &nic.io) || !nic.io.is_io || nic.io.size < REG_CONFIG + 6)
        return fail("BAR0 is not the legacy I/O register block (a modern-only card?)", false);
    uint8_t line = pci_interrupt_line(dev);
    if (dev->interrupt_pin == 0 || dev->interrupt_pin > 4 || line == 0 || line >= 16)
        return fail("the card has no ISA interrupt line from the firmware", false);
    log_info("virtio-net: %02x:%02x.%x 1af4:%04x (subsystem %04x:%04x) io 0x%llx/%llu irq %u pin %s",
             dev->bus, dev->slot, dev->func, dev->device, dev->subsystem_vendor, dev->subsystem,
             (unsigned long long)nic.io.base, (unsigned long long)nic.io.size, line,
             pin_names[dev->interrupt_pin]);
    pci_enable(dev, true, false, true); /* its ports, and DMA into our rings */

    /* The legacy handshake: reset, we see you, we can drive you, features, queues, go. */
    reg_write8(REG_STATUS, 0);
    for (int spins = 0; spins < 1000 && reg_read8(REG_STATUS) != 0; spins++)
        cpu_relax();
    if (reg_read8(REG_STATUS) != 0)
        return fail("the card did not reset", true);
    uint8_t status = STATUS_ACKNOWLEDGE;
    reg_write8(REG_STATUS, status);
    status |= STATUS_DRIVER;
    reg_write8(REG_STATUS, status);
    uint32_t offered = reg_read32(REG_DEVICE_FEATURES);
    uint32_t accepted = offered & VIRTIO_NET_F_MAC;
    reg_write32(REG_DRIVER_FEATURES, accepted);

    if (!queue_setup(&nic.rxq, RX_QUEUE) || !queue_setup(&nic.txq, TX_QUEUE))
        return fail("virtqueue setup failed", true);
    nic.rx_count = nic.rxq.size / 2 < RX_SLOTS_MAX ? nic.rxq.size / 2 : RX_SLOTS_MAX;
    nic.tx_count = nic.txq.size / 2 < TX_SLOTS_MAX ? nic.txq.size / 2 : TX_SLOTS_MAX;
    nic.rx_slots = kmalloc_aligned((size_t)nic.rx_count * SLOT_SIZE, LEGACY_PAGE);
    nic.tx_slots = kmalloc_aligned((size_t)nic.tx_count * SLOT_SIZE, LEGACY_PAGE);
    if (!nic.rx_slots || !nic.tx_slots)
        return fail("no memory for packet buffers", true);
    memset(nic.tx_slots, 0, (size_t)nic.tx_count * SLOT_SIZE);

    if (accepted & VIRTIO_NET_F_MAC) {
        for (int i = 0; i < 6; i++)
            nic.mac[i] = reg_read8(REG_CONFIG + (uint32_t)i);
    } else {
        make_mac(nic.mac);
    }

    /* Every receive slot goes to the card; every transmit slot waits in the pool. The transmit queue asks for
     * no interrupts: finished slots are reclaimed on the next transmit. */
    for (unsigned i = 0; i < nic.rx_count; i++) {
        slot_descriptors(&nic.rxq, nic.rx_slots + (size_t)i * SLOT_SIZE, i, VRING_DESC_F_WRITE,
                         SLOT_SIZE - NET_HDR_LEN);
        queue_offer(&nic.rxq, (uint16_t)(2 * i));
    }
    queue_publish(&nic.rxq);
    for (unsigned i = 0; i < nic.tx_count; i++) {
        slot_descriptors(&nic.txq, nic.tx_slots + (size_t)i * SLOT_SIZE, i, 0, 0);
        nic.tx_free[i] = (uint16_t)(nic.tx_count - 1 - i);
        nic.tx_in_flight[i] = false;
    }
    nic.tx_free_count = nic.tx_count;
    nic.txq.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
    atomic_store_explicit(&rx_ready_head, 0, memory_order_relaxed);
    atomic_store_explicit(&rx_ready_tail, 0, memory_order_relaxed);

    if (!irq_attach_isa(line, virtio_net_irq, 0))
        return fail("no interrupt vector left for it", true);
    status |= STATUS_DRIVER_OK;
    reg_write8(REG_STATUS, status);
    atomic_store_explicit(&nic_up, true, memory_order_release);
    queue_kick(&nic.rxq);     /* the card may have held frames back while it had no buffers */
    harvest_and_wake();               /* a frame that finished before the interrupt was routed */

    const uint8_t *m = nic.mac;
    log_info("virtio-net: mac %02x:%02x:%02x:%02x:%02x:%02x%s, features 0x%08x of 0x%08x, rx %u x %u bytes "
             "(ring %u), tx %u (ring %u)",
             m[0], m[1], m[2], m[3], m[4], m[5], accepted & VIRTIO_NET_F_MAC ? "" : " (made up: card gave none)",
             accepted, offered, nic.rx_count, SLOT_SIZE, nic.rxq.size, nic.tx_count, nic.txq.size);
    return true;
}

/* ---- the rest of the API --------------------------------------------------------------------------------- */

void virtio_net_set_waiter(struct task *task) { atomic_store_explicit(&waiter, task, memory_order_release); }

const uint8_t *virtio_net_mac(void)
{
    return atomic_load_explicit(&nic_up, memory_order_acquire) ? nic.mac : 0;
}

void virtio_net_get_stats(struct virtio_net_stats *out)
{
    *out = (struct virtio_net_stats){
        .rx_packets = atomic_load_explicit(&stats.rx_packets, memory_order_relaxed),
        .rx_bytes = atomic_load_explicit(&stats.rx_bytes, memory_order_relaxed),
        .rx_errors = atomic_load_explicit(&stats.rx_errors, memory_order_relaxed),
        .rx_dropped = atomic_load_explicit(&stats.rx_dropped, memory_order_relaxed),
        .tx_packets = atomic_load_explicit(&stats.tx_packets, memory_order_relaxed),
        .tx_bytes = atomic_load_explicit(&stats.tx_bytes, memory_order_relaxed),
        .tx_errors = atomic_load_explicit(&stats.tx_errors, memory_order_relaxed),
        .tx_ring_full = atomic_load_explicit(&stats.tx_ring_full, memory_order_relaxed),
        .interrupts = atomic_load_explicit(&stats.interrupts, memory_order_relaxed),
    };
}
