/* kernel/drivers/net/virtio_net.c: the virtio network card, as two netdev drivers that share everything but the
 * register interface (kernel/drivers/net/virtio_pci.c). The QEMU lines:
 *
 *   virtio-net-legacy   -netdev user,id=n0 -device virtio-net-pci,netdev=n0            (transitional 1af4:1000,
 *                       also with disable-modern=on): the legacy I/O BAR0
 *   virtio-net-modern   -M q35 -device pcie-root-port,id=rp1,chassis=1 -netdev user,id=n0
 *                       -device virtio-net-pci,netdev=n0,bus=rp1                        (modern-only 1af4:1041;
 *                       also disable-legacy=on, and 1af4:1000 without a legacy BAR): virtio 1.x capabilities
 *
 * The layers, bottom up:
 *
 *   virtqueues  queue 0 receives, queue 1 transmits (kernel/drivers/net/virtqueue.c)
 *   buffers     2048-byte slots, each two descriptors: the virtio_net_hdr alone (10 bytes legacy, 12 with
 *               VIRTIO_F_VERSION_1), then the frame straight after it in the same slot
 *   interrupt   reads the ISR (acknowledging it) and wakes the network task: nothing else
 *   receive     poll reads the used ring itself, judges each element (kernel/drivers/net/virtio_net_desc.c), hands
 *               the frames up and re-posts the buffers
 *   transmit    any task copies a frame into a free slot of a preallocated pool; slots come back as the card
 *               finishes them (reclaimed on the next transmit; the transmit queue raises no interrupt)
 *
 * Negotiated: VIRTIO_NET_F_MAC, and VIRTIO_F_VERSION_1 on the modern interface; nothing that changes the
 * header's use (no MRG_RXBUF), no offloads. */
#include "hal/compiler.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pci.h"
#include "kernel/drivers/net/virtio_net_desc.h"
#include "kernel/drivers/net/virtio_pci.h"
#include "kernel/drivers/net/virtqueue.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/log.h"
#include "kernel/net/netdev.h"
#include "kernel/lib/string.h"

#include <stdatomic.h>

#define VIRTIO_VENDOR 0x1AF4
#define VIRTIO_NET_TRANSITIONAL 0x1000
#define VIRTIO_NET_MODERN 0x1041

#define VIRTIO_NET_F_MAC (1ull << 5)

#define RX_QUEUE 0
#define TX_QUEUE 1

#define HDR_LEN_LEGACY 10 /* struct virtio_net_hdr: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset */
#define HDR_LEN_MODERN 12 /* ... and num_buffers, always there with VERSION_1 */
#define SLOT_SIZE 2048    /* one buffer: header, then the frame */
#define SLOT_ALIGN 4096
#define RX_SLOTS_MAX 64
#define TX_SLOTS_MAX 64

_Static_assert(SLOT_SIZE - HDR_LEN_MODERN >= NETDEV_FRAME_MAX, "a slot holds the largest frame");

static struct {
    struct virtio_pci vp;
    size_t hdr_len;
    struct virtq rxq, txq;
    uint8_t *rx_slots, *tx_slots; /* SLOT_SIZE each; slot i is descriptors 2i (header) and 2i+1 (frame) */
    unsigned rx_count, tx_count;
    /* Transmit side, under the netdev's tx_lock: slots free to fill, and which are with the card. */
    uint16_t tx_free[TX_SLOTS_MAX];
    unsigned tx_free_count;
    bool tx_in_flight[TX_SLOTS_MAX];
    atomic_bool receiving; /* a poll is running: the receive side has one consumer */
    struct netdev *dev;
} nic;

/* ---- receive ------------------------------------------------------------------------------------------------- */

DEBUGGER_TEXT static int virtio_net_poll(struct netdev *dev, netdev_deliver_fn deliver, void *arg, int budget)
{
    if (budget <= 0)
        return 0;
    if (atomic_exchange_explicit(&nic.receiving, true, memory_order_acquire))
        return NETDEV_POLL_BUSY;
    struct virtq *vq = &nic.rxq;
    struct virtq_used_elem e;
    int taken = 0;
    bool reposted = false;
    while (taken < budget && virtq_next_used(vq, &e)) {
        taken++;
        unsigned slot = 0;
        size_t len = 0;
        switch (virtio_net_rx_judge(e.id, e.len, nic.rx_count, nic.hdr_len, SLOT_SIZE, &slot, &len)) {
        case VIRTIO_RX_BAD_ID:
            netdev_count(&dev->counters.rx_errors, 1); /* not a chain we posted: nothing to give back */
            continue;
        case VIRTIO_RX_BAD_LEN:
            netdev_count(&dev->counters.rx_errors, 1);
            break;
        case VIRTIO_RX_FRAME:
            if (!deliver) {
                netdev_count(&dev->counters.rx_dropped, 1);
                break;
            }
            netdev_count(&dev->counters.rx_packets, 1);
            netdev_count(&dev->counters.rx_bytes, len);
            deliver(arg, nic.rx_slots + (size_t)slot * SLOT_SIZE + nic.hdr_len, len);
            break;
        }
        virtq_offer(vq, (uint16_t)(2 * slot));
        virtq_publish(vq); /* at once: the card has the buffer back while later frames are handled */
        reposted = true;
    }
    if (reposted && virtq_needs_notify(vq))
        virtio_pci_notify(&nic.vp, vq->index);
    atomic_store_explicit(&nic.receiving, false, memory_order_release);
    return taken;
}

/* The card's interrupt (level-triggered; the line may be shared, so one that is not ours changes nothing). */
static void virtio_net_irq(void *arg)
{
    uint8_t isr = virtio_pci_isr(&nic.vp); /* acknowledges: the line drops */
    if (isr & (VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG))
        netdev_interrupt(arg);
}

DEBUGGER_TEXT static void virtio_net_set_rx_interrupt(struct netdev *dev, bool on)
{
    (void)dev;
    virtq_set_interrupt(&nic.rxq, on);
}

static bool virtio_net_link_up(struct netdev *dev)
{
    (void)dev;
    return true; /* VIRTIO_NET_F_STATUS is not negotiated: the link is up for as long as the card is */
}

/* ---- transmit ------------------------------------------------------------------------------------------------ */

/* Takes back the transmit slots the card has finished with. tx_lock held. */
static void tx_reclaim(struct netdev *dev)
{
    struct virtq_used_elem e;
    while (virtq_next_used(&nic.txq, &e)) {
        unsigned slot;
        if (!virtio_net_tx_judge(e.id, nic.tx_count, nic.tx_in_flight, &slot)) {
            netdev_count(&dev->counters.tx_errors, 1);
            continue;
        }
        nic.tx_in_flight[slot] = false;
        nic.tx_free[nic.tx_free_count++] = (uint16_t)slot;
    }
}

/* Fills a slot and starts it; dev->tx_lock held (kernel/net/netdev.c). */
DEBUGGER_TEXT static bool virtio_net_transmit_locked(struct netdev *dev, const void *frame, size_t len)
{
    tx_reclaim(dev);
    if (nic.tx_free_count == 0)
        return false;
    unsigned slot = nic.tx_free[--nic.tx_free_count];
    nic.tx_in_flight[slot] = true;
    /* The slot's header stays all zero (no offloads): only the frame and its length change. */
    memcpy(nic.tx_slots + (size_t)slot * SLOT_SIZE + nic.hdr_len, frame, len);
    nic.txq.desc[2 * slot + 1].len = (uint32_t)len;
    virtq_offer(&nic.txq, (uint16_t)(2 * slot));
    virtq_publish(&nic.txq);
    if (virtq_needs_notify(&nic.txq))
        virtio_pci_notify(&nic.vp, nic.txq.index);
    return true;
}

static const struct netdev_ops virtio_net_ops = {
    .transmit_locked = virtio_net_transmit_locked,
    .poll = virtio_net_poll,
    .link_up = virtio_net_link_up,
    .set_rx_interrupt = virtio_net_set_rx_interrupt,
};

/* ---- probe --------------------------------------------------------------------------------------------------- */

static const char *const pin_names[] = { "none", "A", "B", "C", "D" };

/* Gives up: a card the handshake has touched is reset (forgetting the queue addresses before their memory goes
 * back to the heap) and marked FAILED. */
static bool fail(const char *driver, const char *why, bool touched)
{
    if (touched) {
        virtio_pci_reset(&nic.vp);
        virtio_pci_set_status(&nic.vp, VIRTIO_STATUS_FAILED);
    }
    log_warn("%s: %s -- networking disabled", driver, why);
    kfree(nic.rx_slots);
    kfree(nic.tx_slots);
    nic.rx_slots = nic.tx_slots = 0;
    virtq_free(&nic.rxq);
    virtq_free(&nic.txq);
    return false;
}

static bool queue_setup(struct virtq *vq, uint16_t index, const char **why)
{
    uint16_t size = virtio_pci_queue_size(&nic.vp, index);
    if (size == 0) {
        *why = index == RX_QUEUE ? "the receive queue has size 0 (absent)" : "the transmit queue has size 0 (absent)";
        return false;
    }
    if (size < 2 || (size & (size - 1))) {
        *why = "a virtqueue's size is not a power of two >= 2";
        return false;
    }
    if (!virtq_alloc(vq, index, size)) {
        *why = "no memory for a virtqueue";
        return false;
    }
    return virtio_pci_queue_activate(&nic.vp, vq, why);
}

static void slot_descriptors(struct virtq *vq, uint8_t *slot, unsigned i, uint16_t write_flag, uint32_t len)
{
    uint64_t addr = pci_dma_address(slot);
    vq->desc[2 * i] = (struct virtq_desc){ addr, (uint32_t)nic.hdr_len, (uint16_t)(VIRTQ_DESC_F_NEXT | write_flag),
                                           (uint16_t)(2 * i + 1) };
    vq->desc[2 * i + 1] = (struct virtq_desc){ addr + nic.hdr_len, len, write_flag, 0 };
}

/* The handshake up to the queues: reset, we see you, we can drive you, features (modern: and they are OK).
 * *status is what has been set so far; *offered and *accepted the features. False (logged) when the card balks. */
static bool handshake(const char *driver, bool modern, uint8_t *status, uint64_t *offered, uint64_t *accepted)
{
    if (!virtio_pci_reset(&nic.vp))
        return fail(driver, "the card never finished its reset (status stayed non-zero)", true);
    *status = VIRTIO_STATUS_ACKNOWLEDGE;
    virtio_pci_set_status(&nic.vp, *status);
    *status |= VIRTIO_STATUS_DRIVER;
    virtio_pci_set_status(&nic.vp, *status);
    *offered = virtio_pci_device_features(&nic.vp);
    *accepted = *offered & (VIRTIO_NET_F_MAC | (modern ? VIRTIO_F_VERSION_1 : 0));
    if (modern && !(*accepted & VIRTIO_F_VERSION_1))
        return fail(driver, "the card does not offer VIRTIO_F_VERSION_1", true);
    virtio_pci_set_driver_features(&nic.vp, *accepted);
    if (modern) {
        *status |= VIRTIO_STATUS_FEATURES_OK;
        virtio_pci_set_status(&nic.vp, *status);
        if (!(virtio_pci_status(&nic.vp) & VIRTIO_STATUS_FEATURES_OK))
            return fail(driver, "the card refused the features (FEATURES_OK did not stick)", true);
    }
    return true;
}

/* Both queues set up and the packet slots they carry allocated. False (logged) when either fails. */
static bool queues_and_slots(const char *driver)
{
    const char *why = 0;
    if (!queue_setup(&nic.rxq, RX_QUEUE, &why) || !queue_setup(&nic.txq, TX_QUEUE, &why))
        return fail(driver, why, true);
    nic.rx_count = nic.rxq.size / 2 < RX_SLOTS_MAX ? nic.rxq.size / 2 : RX_SLOTS_MAX;
    nic.tx_count = nic.txq.size / 2 < TX_SLOTS_MAX ? nic.txq.size / 2 : TX_SLOTS_MAX;
    nic.rx_slots = kmalloc_aligned((size_t)nic.rx_count * SLOT_SIZE, SLOT_ALIGN);
    nic.tx_slots = kmalloc_aligned((size_t)nic.tx_count * SLOT_SIZE, SLOT_ALIGN);
    if (!nic.rx_slots || !nic.tx_slots)
        return fail(driver, "no memory for packet buffers", true);
    memset(nic.tx_slots, 0, (size_t)nic.tx_count * SLOT_SIZE);
    return true;
}

/* Every receive slot goes to the card; every transmit slot waits in the pool. The transmit queue asks for no
 * interrupts: finished slots are reclaimed on the next transmit. */
static void slots_placed(void)
{
    for (unsigned i = 0; i < nic.rx_count; i++) {
        slot_descriptors(&nic.rxq, nic.rx_slots + (size_t)i * SLOT_SIZE, i, VIRTQ_DESC_F_WRITE,
                         (uint32_t)(SLOT_SIZE - nic.hdr_len));
        virtq_offer(&nic.rxq, (uint16_t)(2 * i));
    }
    virtq_publish(&nic.rxq);
    for (unsigned i = 0; i < nic.tx_count; i++) {
        slot_descriptors(&nic.txq, nic.tx_slots + (size_t)i * SLOT_SIZE, i, 0, 0);
        nic.tx_free[i] = (uint16_t)(nic.tx_count - 1 - i);
        nic.tx_in_flight[i] = false;
    }
    nic.tx_free_count = nic.tx_count;
    virtq_set_interrupt(&nic.txq, false);
}

static bool virtio_net_bring_up(const struct pci_device *pci, struct netdev *dev, bool modern)
{
    const char *driver = modern ? "virtio-net-modern" : "virtio-net-legacy";
    const char *why = 0;
    nic.rxq = nic.txq = (struct virtq){ 0 };
    nic.rx_slots = nic.tx_slots = 0;
    bool opened = modern ? virtio_pci_open_modern(pci, &nic.vp, &why) : virtio_pci_open_legacy(pci, &nic.vp, &why);
    if (!opened)
        return fail(driver, why, false);
    uint8_t line = pci_interrupt_line(pci);
    if (pci->interrupt_pin == 0 || pci->interrupt_pin > 4 || line == 0 || line >= 16)
        return fail(driver, "the card has no ISA interrupt line from the firmware", false);
    nic.hdr_len = modern ? HDR_LEN_MODERN : HDR_LEN_LEGACY;

    /* The handshake: reset, we see you, we can drive you, features (modern: and they are OK), queues, go. */
    uint8_t status;
    uint64_t offered, accepted;
    if (!handshake(driver, modern, &status, &offered, &accepted) || !queues_and_slots(driver))
        return false;
    if (accepted & VIRTIO_NET_F_MAC) {
        for (int i = 0; i < 6; i++)
            dev->mac[i] = virtio_pci_config8(&nic.vp, (uint32_t)i);
    } else {
        netdev_make_mac(dev->mac);
        dev->mac_made_up = true;
    }
    slots_placed();

    nic.dev = dev;
    if (!irq_attach_isa(line, virtio_net_irq, dev))
        return fail(driver, "no interrupt vector left for it", true);
    status |= VIRTIO_STATUS_DRIVER_OK;
    virtio_pci_set_status(&nic.vp, status);
    virtio_pci_notify(&nic.vp, RX_QUEUE); /* the card may have held frames back while it had no buffers */

    dev->ops = &virtio_net_ops;
    dev->priv = &nic;
    /* INTx always: QEMU's virtio devices offer MSI-X alone, and with MSI-X on, a virtio device wants its vectors
     * named in its own registers (and moves the legacy device config), which this driver does not do. */
    ksnprintf(dev->interrupt, sizeof dev->interrupt, "irq %u pin %s", line, pin_names[pci->interrupt_pin]);
    const struct pci_bar *regs = modern ? &nic.vp.common : &nic.vp.legacy;
    log_info("%s: %s 0x%llx, irq %u pin %s, features 0x%llx of 0x%llx, rx %u x %u bytes (ring %u), tx %u "
             "(ring %u), header %zu bytes",
             driver, modern ? "common config at" : "io", (unsigned long long)regs->base, line,
             pin_names[pci->interrupt_pin], (unsigned long long)accepted, (unsigned long long)offered,
             nic.rx_count, SLOT_SIZE, nic.rxq.size, nic.tx_count, nic.txq.size, nic.hdr_len);
    return true;
}

/* ---- the two drivers ----------------------------------------------------------------------------------------- */

static bool legacy_matches(const struct pci_device *pci, const char **reason)
{
    if (pci->vendor != VIRTIO_VENDOR || pci->device != VIRTIO_NET_TRANSITIONAL || !virtio_pci_has_legacy_bar(pci))
        return false;
    *reason = "transitional virtio-net with its legacy I/O BAR0";
    return true;
}

static bool modern_matches(const struct pci_device *pci, const char **reason)
{
    if (pci->vendor != VIRTIO_VENDOR)
        return false;
    if (pci->device == VIRTIO_NET_MODERN) {
        *reason = "modern-only virtio-net (virtio 1.x capabilities)";
        return true;
    }
    if (pci->device == VIRTIO_NET_TRANSITIONAL && !virtio_pci_has_legacy_bar(pci)) {
        *reason = "transitional id without a legacy I/O BAR: virtio 1.x capabilities";
        return true;
    }
    return false;
}

static bool legacy_probe(const struct pci_device *pci, struct netdev *dev)
{
    return virtio_net_bring_up(pci, dev, false);
}

static bool modern_probe(const struct pci_device *pci, struct netdev *dev)
{
    return virtio_net_bring_up(pci, dev, true);
}

const struct netdev_driver virtio_net_legacy_driver = {
    .name = "virtio-net-legacy",
    .qemu_line = "-netdev user,id=n0 -device virtio-net-pci,netdev=n0",
    .matches = legacy_matches,
    .probe = legacy_probe,
};

const struct netdev_driver virtio_net_modern_driver = {
    .name = "virtio-net-modern",
    .qemu_line = "-M q35 -device pcie-root-port,id=rp1,chassis=1 -netdev user,id=n0 "
                 "-device virtio-net-pci,netdev=n0,bus=rp1",
    .matches = modern_matches,
    .probe = modern_probe,
};
