/* kernel/drivers/usb/xhci.h: the xHCI controller as the rest of the driver sees it -- its registers, rings and
 * waits behind a handful of calls, its state private to kernel/drivers/usb/xhci.c. Above it,
 * kernel/drivers/usb/xhci_dev.c drives the devices on it (slots, contexts, endpoints) and
 * kernel/drivers/usb/xhci_task.c runs the driver's task. Everything here runs in that one task (the interrupt
 * handler aside, which only acknowledges and wakes), so nothing in it takes a lock. */
#ifndef KERNEL_DRIVERS_USB_XHCI_H
#define KERNEL_DRIVERS_USB_XHCI_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/pci.h"
#include "kernel/drivers/usb/xhci_trb.h"

#define XHCI_MAX_PORTS 32    /* root ports driven; the rest are logged and left alone */
#define XHCI_RING_TRBS 64    /* one 1 KiB segment, the last TRB a link back to the first */

struct xhci;

struct xhci_ring {
    struct xhci_trb *trbs; /* XHCI_RING_TRBS, page-aligned so it never crosses a 64 KiB boundary */
    unsigned enqueue;
    bool cycle;            /* the producer cycle state */
};

/* The first PCI function of class 0C/03/30, or 0 (with its log line) when there is none. */
struct xhci *xhci_find(void);
const struct pci_device *xhci_pci(const struct xhci *hc);

/* From the driver's task: the controller brought up and running, its interrupt (or poll) chosen, every root
 * port noted to be looked at once, one log line either way; false when it could not be. Transfer events no
 * wait asked for go to on_transfer(arg, event) from then on. */
bool xhci_start(struct xhci *hc, void (*on_transfer)(void *arg, const struct xhci_event *ev), void *arg);
/* The root ports driven: 1..xhci_root_ports(). */
unsigned xhci_root_ports(const struct xhci *hc);
/* Takes every event the controller has written (transfers to on_transfer, root port changes noted). */
void xhci_events(struct xhci *hc);
/* The lowest root port noted as changed, its note taken; 0 when none is. */
unsigned xhci_port_change_take(struct xhci *hc);
/* Until the event ring's interrupt, or the deadline (time_ns), whichever comes first; polled: one poll period. */
void xhci_sleep(struct xhci *hc, int64_t deadline);

/* Root port n's status and control register (PORTSC), n in 1..xhci_root_ports(). */
uint32_t xhci_port_read(struct xhci *hc, unsigned n);
void xhci_port_write(struct xhci *hc, unsigned n, uint32_t value);

/* Entry index of an input or device context at base, as wide as this controller's contexts are. */
uint32_t *xhci_context(const struct xhci *hc, void *base, unsigned index);
/* The device context base array's entry for slot: the bus address of its output context, 0 for none. */
void xhci_set_device_context(struct xhci *hc, unsigned slot, uint64_t bus_address);
/* A bad event, counted: true while it is one of the first few, which get a log line. */
bool xhci_bad_event(struct xhci *hc);

bool xhci_ring_init(struct xhci_ring *r);
/* Queues one TRB (the cycle bit is set here, last); returns its bus address. */
uint64_t xhci_ring_push(struct xhci_ring *r, uint64_t param, uint32_t status, uint32_t control);
void xhci_ring_doorbell(struct xhci *hc, unsigned slot, unsigned target);
/* Queues a command, rings the host doorbell, waits (bounded) for its completion event. False with *why when
 * none came or it did not succeed; *slot gets the event's slot id. */
bool xhci_command(struct xhci *hc, uint64_t param, uint32_t control, uint8_t *slot, const char **why);
/* One control transfer on a device's endpoint 0 ring ep0 (slot's doorbell target 1): the setup packet, a data
 * stage of length bytes at bus address data (its direction the setup's), a status stage, waited for (bounded).
 * *got (when not 0) the bytes the data stage moved. False with *why. */
bool xhci_control_transfer(struct xhci *hc, struct xhci_ring *ep0, unsigned slot, uint64_t setup, uint64_t data,
                           uint16_t length, uint32_t *got, const char **why);

#endif
