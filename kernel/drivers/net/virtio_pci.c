/* kernel/drivers/net/virtio_pci.c: the two virtio PCI register interfaces behind one set of calls (see the
 * header). Legacy: virtio 1.x "Legacy Interfaces", the I/O block in BAR0. Modern: virtio 1.x section 4.1,
 * found through the vendor-specific capabilities (cfg_type 1 common, 2 notify, 3 ISR, 4 device); the first
 * capability of each type whose BAR is usable is taken, as the spec asks. */
#include "hal/compiler.h"
#include "kernel/drivers/net/virtio_pci.h"

#include "hal/cpu.h"

/* Legacy register block in BAR0 (no MSI-X enabled, so the device's own config starts at 0x14). */
#define LEG_DEVICE_FEATURES 0x00 /* 32 */
#define LEG_DRIVER_FEATURES 0x04 /* 32 */
#define LEG_QUEUE_ADDRESS 0x08   /* 32: physical address >> 12 */
#define LEG_QUEUE_SIZE 0x0C      /* 16, read-only */
#define LEG_QUEUE_SELECT 0x0E    /* 16 */
#define LEG_QUEUE_NOTIFY 0x10    /* 16: the queue's index */
#define LEG_STATUS 0x12          /* 8 */
#define LEG_ISR 0x13             /* 8: reading clears it and lowers the interrupt line */
#define LEG_CONFIG 0x14

/* Modern common configuration (struct virtio_pci_common_cfg). */
#define COM_DEVICE_FEATURE_SELECT 0x00 /* 32 */
#define COM_DEVICE_FEATURE 0x04        /* 32 */
#define COM_DRIVER_FEATURE_SELECT 0x08 /* 32 */
#define COM_DRIVER_FEATURE 0x0C        /* 32 */
#define COM_NUM_QUEUES 0x12            /* 16 */
#define COM_DEVICE_STATUS 0x14         /* 8 */
#define COM_QUEUE_SELECT 0x16          /* 16 */
#define COM_QUEUE_SIZE 0x18            /* 16 */
#define COM_QUEUE_ENABLE 0x1C          /* 16 */
#define COM_QUEUE_NOTIFY_OFF 0x1E      /* 16 */
#define COM_QUEUE_DESC 0x20            /* 64, as two 32-bit halves */
#define COM_QUEUE_DRIVER 0x28
#define COM_QUEUE_DEVICE 0x30
#define COM_LENGTH 0x38

#define PCI_CAP_VENDOR 0x09
#define CAP_COMMON 1
#define CAP_NOTIFY 2
#define CAP_ISR 3
#define CAP_DEVICE 4
#define CAPS_MAX 48 /* 256 bytes of configuration space hold at most this many; a loop in the list ends here */

#define MAPPED_LIMIT 0x100000000ull /* the kernel identity-maps the low 4 GiB, MMIO included */
#define RESET_SPINS 100000

/* ---- opening ----------------------------------------------------------------------------------------------- */

bool virtio_pci_has_legacy_bar(const struct pci_device *dev)
{
    struct pci_bar bar;
    return pci_read_bar(dev, 0, &bar) && bar.is_io && bar.size >= LEG_CONFIG + 6;
}

bool virtio_pci_open_legacy(const struct pci_device *dev, struct virtio_pci *vp, const char **why)
{
    *vp = (struct virtio_pci){ .modern = false };
    if (!pci_read_bar(dev, 0, &vp->legacy) || !vp->legacy.is_io || vp->legacy.size < LEG_CONFIG + 6) {
        *why = "BAR0 is not the legacy I/O register block";
        return false;
    }
    pci_enable(dev, true, false, true); /* its ports, and DMA into our rings */
    return true;
}

/* The window [offset, offset + length) of BAR bar as a BAR of its own; false with *why when it is unusable. */
static bool window(const struct pci_device *dev, uint8_t bar_index, uint32_t offset, uint32_t length,
                   uint32_t need, struct pci_bar *out, const char **why)
{
    struct pci_bar bar;
    if (bar_index > 5 || !pci_read_bar(dev, bar_index, &bar)) {
        *why = "a virtio capability names a BAR that is not implemented";
        return false;
    }
    if (length < need || offset > bar.size || length > bar.size - offset) {
        *why = "a virtio capability's window is too small or outside its BAR";
        return false;
    }
    if (!bar.is_io && bar.base + bar.size > MAPPED_LIMIT) {
        *why = "a virtio capability's BAR lies above the 4 GiB the kernel maps";
        return false;
    }
    *out = bar;
    out->base += offset;
    out->size = length;
    return true;
}

bool virtio_pci_open_modern(const struct pci_device *dev, struct virtio_pci *vp, const char **why)
{
    *vp = (struct virtio_pci){ .modern = true };
    if (!(pci_config_read16(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        *why = "no capability list, so no virtio 1.x structures";
        return false;
    }
    bool have[5] = { false };
    uint8_t ptr = pci_config_read8(dev, PCI_CAP_POINTER) & 0xFC;
    for (int n = 0; ptr >= 0x40 && n < CAPS_MAX; n++, ptr = pci_config_read8(dev, (uint16_t)(ptr + 1)) & 0xFC) {
        if (pci_config_read8(dev, ptr) != PCI_CAP_VENDOR || ptr > 0x100 - 16)
            continue;
        uint8_t type = pci_config_read8(dev, (uint16_t)(ptr + 3));
        if (type < CAP_COMMON || type > CAP_DEVICE || have[type])
            continue;
        uint8_t bar = pci_config_read8(dev, (uint16_t)(ptr + 4));
        uint32_t offset = pci_config_read32(dev, (uint16_t)(ptr + 8));
        uint32_t length = pci_config_read32(dev, (uint16_t)(ptr + 12));
        struct pci_bar *target = type == CAP_COMMON ? &vp->common : type == CAP_NOTIFY ? &vp->notify
                               : type == CAP_ISR  ? &vp->isr  : &vp->device;
        uint32_t need = type == CAP_COMMON ? COM_LENGTH : type == CAP_NOTIFY ? 2 : type == CAP_ISR ? 1 : 6;
        if (!window(dev, bar, offset, length, need, target, why))
            return false;
        if (type == CAP_NOTIFY) {
            if (ptr > 0x100 - 20) {
                *why = "the notify capability is cut short";
                return false;
            }
            vp->notify_multiplier = pci_config_read32(dev, (uint16_t)(ptr + 16));
        }
        have[type] = true;
    }
    if (!have[CAP_COMMON] || !have[CAP_NOTIFY] || !have[CAP_ISR] || !have[CAP_DEVICE]) {
        *why = "it lacks one of the virtio 1.x common, notify, ISR and device capabilities";
        return false;
    }
    bool io = vp->common.is_io || vp->notify.is_io || vp->isr.is_io || vp->device.is_io;
    pci_enable(dev, io, true, true);
    return true;
}

/* ---- status and features ----------------------------------------------------------------------------------- */

uint8_t virtio_pci_status(struct virtio_pci *vp)
{
    return vp->modern ? pci_bar_read8(&vp->common, COM_DEVICE_STATUS) : pci_bar_read8(&vp->legacy, LEG_STATUS);
}

void virtio_pci_set_status(struct virtio_pci *vp, uint8_t status)
{
    if (vp->modern)
        pci_bar_write8(&vp->common, COM_DEVICE_STATUS, status);
    else
        pci_bar_write8(&vp->legacy, LEG_STATUS, status);
}

bool virtio_pci_reset(struct virtio_pci *vp)
{
    virtio_pci_set_status(vp, 0);
    /* a modern device may take its time; it says it is done by reading back 0 */
    for (int spins = 0; spins < RESET_SPINS; spins++) {
        if (virtio_pci_status(vp) == 0)
            return true;
        cpu_relax();
    }
    return false;
}

uint64_t virtio_pci_device_features(struct virtio_pci *vp)
{
    if (!vp->modern)
        return pci_bar_read32(&vp->legacy, LEG_DEVICE_FEATURES);
    pci_bar_write32(&vp->common, COM_DEVICE_FEATURE_SELECT, 0);
    uint64_t low = pci_bar_read32(&vp->common, COM_DEVICE_FEATURE);
    pci_bar_write32(&vp->common, COM_DEVICE_FEATURE_SELECT, 1);
    return low | (uint64_t)pci_bar_read32(&vp->common, COM_DEVICE_FEATURE) << 32;
}

void virtio_pci_set_driver_features(struct virtio_pci *vp, uint64_t features)
{
    if (!vp->modern) {
        pci_bar_write32(&vp->legacy, LEG_DRIVER_FEATURES, (uint32_t)features);
        return;
    }
    pci_bar_write32(&vp->common, COM_DRIVER_FEATURE_SELECT, 0);
    pci_bar_write32(&vp->common, COM_DRIVER_FEATURE, (uint32_t)features);
    pci_bar_write32(&vp->common, COM_DRIVER_FEATURE_SELECT, 1);
    pci_bar_write32(&vp->common, COM_DRIVER_FEATURE, (uint32_t)(features >> 32));
}

/* ---- queues ------------------------------------------------------------------------------------------------ */

uint16_t virtio_pci_queue_size(struct virtio_pci *vp, uint16_t index)
{
    if (!vp->modern) {
        pci_bar_write16(&vp->legacy, LEG_QUEUE_SELECT, index);
        return pci_bar_read16(&vp->legacy, LEG_QUEUE_SIZE);
    }
    if (index >= pci_bar_read16(&vp->common, COM_NUM_QUEUES))
        return 0;
    pci_bar_write16(&vp->common, COM_QUEUE_SELECT, index);
    return pci_bar_read16(&vp->common, COM_QUEUE_SIZE);
}

static void write64(struct pci_bar *bar, uint32_t offset, uint64_t value)
{
    pci_bar_write32(bar, offset, (uint32_t)value);
    pci_bar_write32(bar, offset + 4, (uint32_t)(value >> 32));
}

bool virtio_pci_queue_activate(struct virtio_pci *vp, struct virtq *vq, const char **why)
{
    uint64_t desc = pci_dma_address(vq->desc);
    if (!vp->modern) {
        if ((desc >> 12) > 0xFFFFFFFFu) {
            *why = "a queue lies beyond the legacy 44-bit queue address";
            return false;
        }
        pci_bar_write16(&vp->legacy, LEG_QUEUE_SELECT, vq->index);
        pci_bar_write32(&vp->legacy, LEG_QUEUE_ADDRESS, (uint32_t)(desc >> 12));
        return true;
    }
    if (vq->index >= VIRTIO_QUEUES_MAX) {
        *why = "a queue number beyond what the driver keeps";
        return false;
    }
    pci_bar_write16(&vp->common, COM_QUEUE_SELECT, vq->index);
    pci_bar_write16(&vp->common, COM_QUEUE_SIZE, vq->size);
    write64(&vp->common, COM_QUEUE_DESC, desc);
    write64(&vp->common, COM_QUEUE_DRIVER, pci_dma_address(vq->avail));
    write64(&vp->common, COM_QUEUE_DEVICE, pci_dma_address(vq->used));
    uint64_t doorbell = (uint64_t)pci_bar_read16(&vp->common, COM_QUEUE_NOTIFY_OFF) * vp->notify_multiplier;
    if (doorbell + 2 > vp->notify.size) {
        *why = "a queue's doorbell lies outside the notify capability";
        return false;
    }
    vp->notify_offset[vq->index] = (uint32_t)doorbell;
    pci_bar_write16(&vp->common, COM_QUEUE_ENABLE, 1);
    return true;
}

DEBUGGER_TEXT void virtio_pci_notify(struct virtio_pci *vp, uint16_t index)
{
    if (vp->modern)
        pci_bar_write16(&vp->notify, vp->notify_offset[index], index);
    else
        pci_bar_write16(&vp->legacy, LEG_QUEUE_NOTIFY, index);
}

/* ---- interrupt and config ---------------------------------------------------------------------------------- */

uint8_t virtio_pci_isr(struct virtio_pci *vp)
{
    return vp->modern ? pci_bar_read8(&vp->isr, 0) : pci_bar_read8(&vp->legacy, LEG_ISR);
}

uint8_t virtio_pci_config8(struct virtio_pci *vp, uint32_t offset)
{
    return vp->modern ? pci_bar_read8(&vp->device, offset) : pci_bar_read8(&vp->legacy, LEG_CONFIG + offset);
}
