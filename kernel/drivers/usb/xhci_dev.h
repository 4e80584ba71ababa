/* kernel/drivers/usb/xhci_dev.h: the devices on one xHCI controller -- on its root ports and behind hubs -- and
 * the USB core's handle on them (kernel/drivers/usb/usb_host.h), which kernel/drivers/usb/xhci_dev.c implements
 * over the controller's calls (kernel/drivers/usb/xhci.h). The driver's task (kernel/drivers/usb/xhci_task.c)
 * holds one and calls here. */
#ifndef KERNEL_DRIVERS_USB_XHCI_DEV_H
#define KERNEL_DRIVERS_USB_XHCI_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/drivers/usb/usb_host.h"
#include "kernel/drivers/usb/usb_kbd.h"
#include "kernel/drivers/usb/xhci.h"

#define XHCI_BEHIND_HUBS 16  /* devices (hubs among them) behind hubs; one more is one line and left alone */
#define XHCI_DEVS (XHCI_MAX_PORTS + XHCI_BEHIND_HUBS)

/* A device on a root port, or behind hubs (kernel/drivers/usb/usb_hub.c): the USB core's view of it, and the
 * xHCI side -- its contexts, rings and endpoint. */
struct xhci_port {
    struct usb_device dev;     /* dev.buf: control transfer data, then the report buffer */
    bool used;                 /* behind a hub: this entry of bus->behind is taken */
    uint8_t dci;               /* the keyboard's (or hub's status-change) endpoint's device context index */
    bool keyboard;             /* its interrupt endpoint has a transfer queued */
    bool failed;               /* enumeration gave up: left alone until it is unplugged */
    void *in_ctx, *out_ctx;    /* input and output (device) contexts */
    struct xhci_ring ep0, intr;
    uint64_t report_trb;       /* bus address of the queued report transfer TRB */
    uint16_t report_len;       /* the bytes it asks for */
    struct usb_kbd kbd;
};

struct xhci_bus {
    struct usb_host host;      /* what the hub driver is given */
    struct xhci *hc;
    struct xhci_port ports[XHCI_MAX_PORTS + 1]; /* by port number, 1-based */
    struct xhci_port behind[XHCI_BEHIND_HUBS];  /* devices behind hubs, in no order */
};

/* bus, empty, on hc; the argument xhci_start wants with xhci_dev_transfer. */
void xhci_bus_init(struct xhci_bus *bus, struct xhci *hc);
/* A transfer event no wait asked for (arg: the bus): a keyboard's report, a hub's, or the end of its endpoint. */
void xhci_dev_transfer(void *arg, const struct xhci_event *ev);
/* Root port n changed: a device gone is detached (with everything behind it), one come is enumerated. */
void xhci_root_port_look(struct xhci_bus *bus, unsigned n);
/* Key repeat: every keyboard's repeat due at now typed; returns the earliest of next and the next one due. */
int64_t xhci_keyboards_tick(struct xhci_bus *bus, int64_t now, int64_t next);

#endif
