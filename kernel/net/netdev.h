/* kernel/net/netdev.h: one network card as the network task sees it, whichever driver runs it -- Ethernet
 * frames out (transmit) and in (poll), the MAC, the link, the receive interrupt on or off, and one set of
 * counters every driver keeps the same way, so `net` prints the same lines for all of them. netdev_probe picks
 * the driver by PCI id at boot (kernel/net/netdev.c holds the table); each driver is a file of its own in
 * kernel/drivers/ that fills a struct netdev.
 *
 * The receive interrupt does no more than acknowledge the card and wake the task registered with
 * netdev_set_waiter (netdev_interrupt). Frames are taken off the card's ring only by poll, which reads the
 * ring itself and never depends on the interrupt having run: the network task calls it after every wake, and
 * a debugger transport (issue 15) can call it with interrupts off after set_rx_interrupt(false). */
#ifndef KERNEL_NET_NETDEV_H
#define KERNEL_NET_NETDEV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/spinlock.h"

struct task;
struct pci_device;

/* The longest frame transmit takes: 14-byte Ethernet header, a 4-byte VLAN tag, 1500 bytes of payload (no
 * frame check sequence; the card adds it). */
#define NETDEV_FRAME_MAX 1518
/* What poll returns to a second caller while the first is still inside (negative: no frame was taken). */
#define NETDEV_POLL_BUSY (-1)
/* The shortest frame poll hands up: an Ethernet header. */
#define NETDEV_FRAME_MIN 14

/* A snapshot of what a card did (netdev_get_stats). */
struct netdev_stats {
    uint64_t rx_packets; /* frames handed to deliver() */
    uint64_t rx_bytes;   /* their Ethernet bytes */
    uint64_t rx_errors;  /* buffers the card returned that cannot be a frame: bad id, impossible length or
                          * status, an error bit the card set; dropped */
    uint64_t rx_dropped; /* good frames discarded because poll was given no deliver() */
    uint64_t tx_packets; /* frames handed to the card */
    uint64_t tx_bytes;
    uint64_t tx_errors;  /* frames refused for their length, and completions the card reported wrongly */
    uint64_t tx_ring_full; /* frames refused because every transmit buffer was still with the card: the
                            * sender decides whether that is a wait or a loss, so it is not called a drop */
    uint64_t interrupts; /* interrupts that were the card's */
    uint64_t tx_busy;    /* polled transmits refused because the transmit lock was held */
};

struct netdev_counters {
    _Atomic uint64_t rx_packets, rx_bytes, rx_errors, rx_dropped;
    _Atomic uint64_t tx_packets, tx_bytes, tx_errors, tx_ring_full;
    _Atomic uint64_t interrupts;
    _Atomic uint64_t tx_busy;
};

typedef void (*netdev_deliver_fn)(void *arg, const uint8_t *frame, size_t len);

struct netdev;

struct netdev_ops {
    /* Reclaims what the card has finished sending, copies one Ethernet frame (1..NETDEV_FRAME_MAX bytes, checked
     * by the caller) into a transmit buffer and starts it; false when every buffer is still in flight. Called
     * only by netdev_transmit and netdev_transmit_polled, with dev->tx_lock held and interrupts off; they count
     * the outcome. */
    bool (*transmit_locked)(struct netdev *dev, const void *frame, size_t len);
    /* Reads the receive ring: hands up to budget frames to deliver(arg, frame, len) (valid only during the
     * call; deliver may be NULL: counted as rx_dropped) and gives each buffer back to the card. Returns the
     * buffers taken; budget means more may be waiting. One caller at a time: a second one meanwhile gets
     * NETDEV_POLL_BUSY (a debugger on a stopped machine learns so that the caller was stopped inside).
     * No lock, no allocation: safe with interrupts off. */
    int (*poll)(struct netdev *dev, netdev_deliver_fn deliver, void *arg, int budget);
    /* Whether the card says its link is up. */
    bool (*link_up)(struct netdev *dev);
    /* Lets the card interrupt when frames arrive, or stops it (a polled user turns it off). */
    void (*set_rx_interrupt)(struct netdev *dev, bool on);
};

struct netdev {
    const struct netdev_ops *ops;
    const char *driver;          /* "e1000", "virtio-net-modern", ... */
    uint16_t vendor, device;     /* the PCI id it was chosen by */
    uint8_t bus, slot, func;
    uint8_t mac[6];
    bool mac_made_up;            /* the card offered none: a locally administered one of our own */
    char interrupt[24];          /* how the card interrupts, for `net`: "MSI vector 0x41", "irq 11 pin A" */
    struct netdev_counters counters;
    spinlock_t tx_lock;          /* the transmit ring's: held across ops->transmit_locked */
    _Atomic(struct task *) waiter;
    void *priv;                  /* the driver's own state */
};

/* A driver, as netdev_probe sees it. */
struct netdev_driver {
    const char *name;
    const char *qemu_line;       /* the QEMU device line it drives, for the boot log */
    /* Whether this driver speaks this PCI function; why (one phrase for the boot log) in *reason. */
    bool (*matches)(const struct pci_device *pci, const char **reason);
    /* Brings the card up into dev (ops, mac, priv; netdev_probe sets the rest), or logs one line saying why not
     * and returns false, leaving the card reset and nothing allocated. Task context, once. */
    bool (*probe)(const struct pci_device *pci, struct netdev *dev);
};

/* Walks the PCI bus for the first function a driver here speaks and brings it up; logs which driver took it
 * and why, or one line saying there is no card it drives (naming any network cards it found). NULL when
 * networking is off. Once, from task context (net_init). */
struct netdev *netdev_probe(void);

/* The task to task_wake() when the card interrupts (NULL: nobody). It should poll after registering: frames
 * may have arrived before. */
void netdev_set_waiter(struct netdev *dev, struct task *task);
void netdev_get_stats(const struct netdev *dev, struct netdev_stats *out);

/* Sends one Ethernet frame: false when the length is wrong (counted as tx_errors) or every transmit buffer is
 * in flight (tx_ring_full). Any task; waits for the transmit lock with interrupts off. */
bool netdev_transmit(struct netdev *dev, const void *frame, size_t len);
/* The same for a caller that must never wait (the debugger with the other CPUs stopped, or the timer tick):
 * one try at the transmit lock, false (counted as tx_busy) when someone holds it. */
bool netdev_transmit_polled(struct netdev *dev, const void *frame, size_t len);

/* For drivers. netdev_interrupt: the card said the interrupt was its own -- counted, the waiter woken
 * (interrupt context: no locks). */
void netdev_interrupt(struct netdev *dev);
static inline void netdev_count(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}
/* A MAC of our own for a card that offers none: locally administered, unicast, from the cycle counter. */
void netdev_make_mac(uint8_t mac[6]);

#endif
