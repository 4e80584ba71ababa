/* kernel/net/netdev.c: choosing the network card at boot -- the table of drivers, the PCI walk that gives the
 * first function one of them speaks to that driver, and the boot log's account of it -- and what every driver
 * shares: the transmit lock and the counting around the driver's transmit, the counters' snapshot, the waiter
 * an interrupt wakes, a MAC for a card without one. */
#include "kernel/net/netdev.h"

#include "hal/compiler.h"
#include "hal/cpu.h"
#include "hal/pci.h"
#include "kernel/log.h"
#include "kernel/task.h"

extern const struct netdev_driver virtio_net_legacy_driver, virtio_net_modern_driver, e1000_driver, e1000e_driver;

/* In order of preference for one function: a transitional virtio card is driven through its legacy BAR when it
 * has one (the modern driver's matches() refuses it then). */
static const struct netdev_driver *const drivers[] = {
    &virtio_net_legacy_driver,
    &virtio_net_modern_driver,
    &e1000_driver,
    &e1000e_driver,
};

#define PCI_CLASS_NETWORK 0x02

static struct netdev the_netdev;

static const struct netdev_driver *driver_for(const struct pci_device *pci, const char **reason)
{
    for (unsigned i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
        if (drivers[i]->matches(pci, reason))
            return drivers[i];
    return 0;
}

struct netdev *netdev_probe(void)
{
    static bool probed;
    static struct netdev *result;
    if (probed)
        return result;
    probed = true;

    unsigned others = 0;
    for (unsigned i = 0; i < pci_device_count(); i++) {
        const struct pci_device *pci = pci_device_at(i);
        const char *reason = "";
        const struct netdev_driver *drv = driver_for(pci, &reason);
        if (!drv) {
            if (pci->class_code == PCI_CLASS_NETWORK) {
                log_warn("net: %02x:%02x.%x %04x:%04x is a network card no driver here speaks", pci->bus, pci->slot,
                         pci->func, pci->vendor, pci->device);
                others++;
            }
            continue;
        }
        log_info("net: %s (%04x:%04x) at %02x:%02x.%x: %s; QEMU line %s", drv->name, pci->vendor, pci->device,
                 pci->bus, pci->slot, pci->func, reason, drv->qemu_line);
        struct netdev *dev = &the_netdev;
        *dev = (struct netdev){ .driver = drv->name, .vendor = pci->vendor, .device = pci->device,
                                .bus = pci->bus, .slot = pci->slot, .func = pci->func,
                                .tx_lock = SPINLOCK_INIT };
        if (!drv->probe(pci, dev))
            continue; /* it said why; another card may still do */
        const uint8_t *m = dev->mac;
        log_info("net: %s up, mac %02x:%02x:%02x:%02x:%02x:%02x%s, link %s", drv->name, m[0], m[1], m[2], m[3],
                 m[4], m[5], dev->mac_made_up ? " (made up: the card gave none)" : "",
                 dev->ops->link_up(dev) ? "up" : "down");
        result = dev;
        return result;
    }
    log_warn("net: no network card this kernel drives%s (it drives virtio-net 1af4:1000/1041, e1000 8086:100e, "
             "e1000e 8086:10d3: start QEMU with -nic user) -- networking disabled",
             others ? " among the PCI network cards above" : " on the PCI bus");
    return 0;
}

void netdev_set_waiter(struct netdev *dev, struct task *task)
{
    atomic_store_explicit(&dev->waiter, task, memory_order_release);
}

void netdev_interrupt(struct netdev *dev)
{
    netdev_count(&dev->counters.interrupts, 1);
    struct task *task = atomic_load_explicit(&dev->waiter, memory_order_acquire);
    if (task)
        task_wake(task);
}

/* The driver's transmit under the lock the caller took (released here), and the outcome counted. */
DEBUGGER_TEXT static bool transmit_under_lock(struct netdev *dev, const void *frame, size_t len, unsigned long flags)
{
    bool sent = dev->ops->transmit_locked(dev, frame, len);
    spin_unlock_irqrestore(&dev->tx_lock, flags);
    if (!sent) {
        netdev_count(&dev->counters.tx_ring_full, 1);
        return false;
    }
    netdev_count(&dev->counters.tx_packets, 1);
    netdev_count(&dev->counters.tx_bytes, len);
    return true;
}

DEBUGGER_TEXT static bool length_ok(struct netdev *dev, size_t len)
{
    if (len > 0 && len <= NETDEV_FRAME_MAX)
        return true;
    netdev_count(&dev->counters.tx_errors, 1);
    return false;
}

bool netdev_transmit(struct netdev *dev, const void *frame, size_t len)
{
    if (!length_ok(dev, len))
        return false;
    return transmit_under_lock(dev, frame, len, spin_lock_irqsave(&dev->tx_lock));
}

DEBUGGER_TEXT bool netdev_transmit_polled(struct netdev *dev, const void *frame, size_t len)
{
    if (!length_ok(dev, len))
        return false;
    unsigned long flags;
    if (!spin_trylock_irqsave(&dev->tx_lock, &flags)) {
        netdev_count(&dev->counters.tx_busy, 1);
        return false;
    }
    return transmit_under_lock(dev, frame, len, flags);
}

void netdev_get_stats(const struct netdev *dev, struct netdev_stats *out)
{
    const struct netdev_counters *c = &dev->counters;
    *out = (struct netdev_stats){
        .rx_packets = atomic_load_explicit(&c->rx_packets, memory_order_relaxed),
        .rx_bytes = atomic_load_explicit(&c->rx_bytes, memory_order_relaxed),
        .rx_errors = atomic_load_explicit(&c->rx_errors, memory_order_relaxed),
        .rx_dropped = atomic_load_explicit(&c->rx_dropped, memory_order_relaxed),
        .tx_packets = atomic_load_explicit(&c->tx_packets, memory_order_relaxed),
        .tx_bytes = atomic_load_explicit(&c->tx_bytes, memory_order_relaxed),
        .tx_errors = atomic_load_explicit(&c->tx_errors, memory_order_relaxed),
        .tx_ring_full = atomic_load_explicit(&c->tx_ring_full, memory_order_relaxed),
        .interrupts = atomic_load_explicit(&c->interrupts, memory_order_relaxed),
        .tx_busy = atomic_load_explicit(&c->tx_busy, memory_order_relaxed),
    };
}

void netdev_make_mac(uint8_t mac[6])
{
    uint64_t c = cycles();
    mac[0] = 0x02;
    for (int i = 1; i < 6; i++)
        mac[i] = (uint8_t)(c >> (8 * (i - 1)) ^ c >> (8 * (i + 2)));
}
