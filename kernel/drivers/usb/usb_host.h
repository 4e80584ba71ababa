/* kernel/drivers/usb/usb_host.h: what a USB class driver sees of a device and asks of the host controller it is
 * on -- today the hub driver (kernel/drivers/usb/usb_hub.c) on the xHCI driver (kernel/drivers/usb/xhci_dev.c,
 * which implements these operations). A class driver reaches the controller only through here: it names no
 * function of a controller and uses no field of one, so a second controller is a second set of operations.
 * Everything runs in the controller's one task, so nothing here takes a lock. */
#ifndef KERNEL_DRIVERS_USB_USB_HOST_H
#define KERNEL_DRIVERS_USB_USB_HOST_H

#include <stdbool.h>
#include <stdint.h>

/* A device as the USB core sees it: where it sits (what its host addresses it by, and what a hub places the
 * devices behind it from), who it is, and a hub's state. Its host keeps it inside its own record of the device;
 * a free record is all zeroes. */
struct usb_device {
    struct usb_device *parent; /* the hub it is behind; 0 on a root port */
    uint8_t parent_port;       /* its port on parent */
    uint8_t root_port;         /* the root port its path starts at */
    uint8_t tier;              /* hubs between it and its root port: the route string's tiers */
    uint8_t speed;             /* xHCI speed code: 1 full, 2 low, 3 high, 4 super */
    uint32_t route;            /* the route string below the root port */
    uint8_t slot;              /* the host's id for it (a transaction translator names its hub by it); 0: none */
    uint8_t tt_slot, tt_port;  /* low/full speed behind a high-speed hub: that hub's slot and port */
    uint16_t vendor, product;
    uint8_t *buf;              /* a control transfer's data stage, from its start; the host's memory */
    bool hub;                  /* a configured hub: its status-change endpoint has a transfer queued */
    bool hub_stopped;          /* its status-change endpoint ended in error: no transfer is queued there */
    uint8_t hub_ports;         /* 1..15 */
    uint8_t hub_think;         /* its TT think time code, when high speed */
    uint8_t hub_power_ms;      /* from SET_PORT_FEATURE(PORT_POWER) to power good */
    uint16_t hub_changed;      /* bit n: port n to be looked at */
    uint16_t hub_failed;       /* bit n: port n's device was given up on, until it is unplugged */
};

/* The end of a transfer on a device's interrupt IN endpoint, as the class driver that queued it sees it. */
struct usb_report {
    bool ok;                   /* complete or short; false: the endpoint stopped (code says how) */
    unsigned code;             /* the controller's completion code */
    const uint8_t *data;       /* when ok: the bytes that came (len), or 0 when the count it gave names nothing */
    unsigned len;
    unsigned asked;            /* the length it was queued with */
};

struct usb_host;

struct usb_host_ops {
    /* One control transfer on d's endpoint 0, the data stage (length bytes, if any) in d->buf; *got (when not
     * 0) the bytes it moved. False with *why. */
    bool (*control)(struct usb_host *host, struct usb_device *d, uint8_t type, uint8_t request, uint16_t value,
                    uint16_t index, uint16_t length, uint32_t *got, const char **why);
    /* Queues a transfer of len bytes on d's interrupt IN endpoint; its end comes back to d's class driver. */
    void (*queue_report)(struct usb_host *host, struct usb_device *d, unsigned len);
    /* Device record i, root ports first, free ones included; 0 past the last. */
    struct usb_device *(*device_at)(struct usb_host *host, unsigned i);
    /* A free record for a device behind a hub, or 0 when there is no room. */
    struct usb_device *(*spare)(struct usb_host *host);
    /* d, a spare record with its place set (parent, ports, tier, route, speed, TT), taken and enumerated: slot,
     * address, descriptors, and a keyboard or a hub configured. False when it was given up on (one log line
     * says why); d is free again then. */
    bool (*enumerate)(struct usb_host *host, struct usb_device *d);
    /* d and every device behind it: slot disabled, one line each, their records free. */
    void (*detach)(struct usb_host *host, struct usb_device *d);
};

struct usb_host {
    const struct usb_host_ops *ops;
};

#endif
