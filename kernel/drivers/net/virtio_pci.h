/* kernel/drivers/net/virtio_pci.h: a virtio device on PCI through either of its two register interfaces, so a
 * device driver (kernel/drivers/net/virtio_net.c) is written once for both:
 *
 *   legacy   I/O BAR0: features (32 bits), queue select/size/page-frame address/notify, status, ISR, then the
 *            device's own config at 0x14 (no MSI-X enabled)
 *   modern   virtio 1.x: vendor capabilities in configuration space point into memory BARs at the common config
 *            (64 feature bits, queue size/enable/notify offset/three addresses, status), the notify area, the ISR
 *            byte and the device config; MSI-X is left off, so the interrupt is INTx and the ISR says whose
 *
 * Task context, except virtio_pci_isr and virtio_pci_notify (no lock; interrupt-safe). */
#ifndef KERNEL_DRIVERS_NET_VIRTIO_PCI_H
#define KERNEL_DRIVERS_NET_VIRTIO_PCI_H

#include "hal/pci.h"
#include "kernel/drivers/net/virtqueue.h"

#include <stdbool.h>
#include <stdint.h>

#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER 2
#define VIRTIO_STATUS_DRIVER_OK 4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_FAILED 128

#define VIRTIO_ISR_QUEUE 1
#define VIRTIO_ISR_CONFIG 2

#define VIRTIO_F_VERSION_1 (1ull << 32)

#define VIRTIO_QUEUES_MAX 2

struct virtio_pci {
    bool modern;
    struct pci_bar legacy;                 /* legacy: BAR0, I/O */
    struct pci_bar common, notify, isr, device; /* modern: each a window of its BAR (base moved to the start) */
    uint32_t notify_multiplier;
    uint32_t notify_offset[VIRTIO_QUEUES_MAX]; /* modern: byte offset of each queue's doorbell in notify */
};

/* Opens dev's legacy interface (BAR0 must be I/O and large enough) or its modern one (the four capabilities,
 * each in a BAR that is mapped). False with *why, one phrase for the boot log, when the device lacks it. */
bool virtio_pci_open_legacy(const struct pci_device *dev, struct virtio_pci *vp, const char **why);
bool virtio_pci_open_modern(const struct pci_device *dev, struct virtio_pci *vp, const char **why);
/* Whether dev has a legacy I/O BAR0 (without touching the device). */
bool virtio_pci_has_legacy_bar(const struct pci_device *dev);

/* Writes status 0 and waits for the device to read back 0; false when it never does. */
bool virtio_pci_reset(struct virtio_pci *vp);
uint8_t virtio_pci_status(struct virtio_pci *vp);
void virtio_pci_set_status(struct virtio_pci *vp, uint8_t status);
uint64_t virtio_pci_device_features(struct virtio_pci *vp);
void virtio_pci_set_driver_features(struct virtio_pci *vp, uint64_t features);
/* The device's size for queue index (0: no such queue). */
uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t index);
/* Gives the device the queue's rings (and, modern, enables it); false with *why when it cannot take them. */
bool virtio_pci_queue_activate(struct virtio_pci *vp, struct virtq *vq, const char **why);
void virtio_pci_notify(struct virtio_pci *vp, uint16_t index);
/* Reads (and so acknowledges) the ISR status: VIRTIO_ISR_QUEUE, VIRTIO_ISR_CONFIG, or 0 when not ours. */
uint8_t virtio_pci_isr(struct virtio_pci *vp);
uint8_t virtio_pci_config8(struct virtio_pci *vp, uint32_t offset);

#endif
