/* kernel/drivers/usb/xhci.h: the xHCI driver's shared state and its two halves' calls -- kernel/drivers/usb/xhci.c
 * brings the controller up and owns the command and event rings and the driver task; kernel/drivers/usb/xhci_dev.c
 * enumerates a root port's device (slot, address, descriptors, configuration) and drives its keyboard
 * endpoint. Everything here runs in the one xHCI task, so nothing in it takes a lock. */
#ifndef KERNEL_DRIVERS_USB_XHCI_H
#define KERNEL_DRIVERS_USB_XHCI_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/pci.h"
#include "kernel/task.h"
#include "kernel/drivers/usb/usb_hub_desc.h"
#include "kernel/drivers/usb/usb_kbd.h"
#include "kernel/drivers/usb/xhci_trb.h"

#define XHCI_MAX_PORTS 32    /* root ports driven; the rest are logged and left alone */
#define XHCI_RING_TRBS 64    /* one 1 KiB segment, the last TRB a link back to the first */
#define XHCI_BEHIND_HUBS 16  /* devices (hubs among them) behind hubs; one more is one line and left alone */
#define XHCI_DEVS (XHCI_MAX_PORTS + XHCI_BEHIND_HUBS)

struct xhci_ring {
    struct xhci_trb *trbs; /* XHCI_RING_TRBS, page-aligned so it never crosses a 64 KiB boundary */
    unsigned enqueue;
    bool cycle;            /* the producer cycle state */
};

/* A device on a root port, or behind hubs (kernel/drivers/usb/usb_hub.c). */
struct xhci_port {
    uint8_t slot;              /* 0: no device addressed here */
    bool used;                 /* behind a hub: this entry of xhci.behind is taken */
    struct xhci_port *parent;  /* the hub it is behind; 0 on a root port */
    uint8_t root_port;         /* the root port its path starts at */
    uint8_t parent_port;       /* its port on parent */
    uint8_t tier;              /* hubs between it and its root port: the route string's tiers */
    uint8_t speed;             /* xHCI speed code: 1 full, 2 low, 3 high, 4 super */
    uint32_t route;            /* the route string below the root port */
    uint8_t tt_slot, tt_port;  /* low/full speed behind a high-speed hub: that hub's slot and port */
    uint16_t vendor, product;
    bool hub;                  /* a configured hub: its slot context says so, its status-change endpoint is dci */
    bool hub_stopped;          /* its status-change endpoint ended in error: no transfer is queued there */
    uint8_t hub_ports;         /* 1..15 */
    uint8_t hub_think;         /* its TT think time code, when high speed */
    uint8_t hub_power_ms;      /* from SET_PORT_FEATURE(PORT_POWER) to power good */
    uint16_t hub_changed;      /* bit n: port n to be looked at */
    uint16_t hub_failed;       /* bit n: port n's device was given up on, until it is unplugged */
    uint8_t dci;               /* the keyboard endpoint's device context index */
    bool keyboard;             /* its interrupt endpoint has a transfer queued */
    bool failed;               /* enumeration gave up: left alone until it is unplugged */
    void *in_ctx, *out_ctx;    /* input and output (device) contexts */
    struct xhci_ring ep0, intr;
    uint8_t *buf;              /* control transfer data, then the report buffer */
    uint64_t report_trb;       /* bus address of the queued report transfer TRB */
    uint16_t report_len;       /* the bytes it asks for */
    struct usb_kbd kbd;
};

struct xhci {
    const struct pci_device *pci;
    struct pci_bar bar;
    uint32_t op, rt, db;        /* offsets in the BAR of the operational, runtime and doorbell registers */
    unsigned max_slots, max_ports, ctx_size;
    uint64_t *dcbaa;
    struct xhci_ring cmd;
    struct xhci_trb *events;    /* the event ring's one segment */
    unsigned ev_dequeue;
    bool ev_cycle;
    struct xhci_port ports[XHCI_MAX_PORTS + 1]; /* by port number, 1-based */
    struct xhci_port behind[XHCI_BEHIND_HUBS];  /* devices behind hubs, in no order */
    uint32_t port_changed;      /* bit n: port n+1 had a status change event not yet looked at */
    uint64_t bad_events;
    struct task *task;          /* the xHCI task, which the interrupt wakes */
    bool irq;                   /* the event ring interrupts (MSI or INTx); false: polled */
    unsigned msi_vector;        /* its MSI or MSI-X vector, when irq by message; 0: by INTx or polled */
    const char *msi_kind;       /* "MSI" or "MSI-X" when msi_vector; else why neither */
    volatile uint32_t interrupts; /* the event ring's interrupts taken (written by xhci_irq alone) */
    bool told_interrupt;        /* the first one has had its log line */
    unsigned line;              /* its ISA interrupt line, when irq by INTx */
    const char *poll_why;       /* why not, when polled */
    uint64_t watch_trb;         /* a control transfer's data stage: its event is noted here */
    uint32_t watch_residual;
    uint8_t watch_code;         /* 0 until that event came */
};

/* xhci.c */
/* From kmain: finds the controller by class and starts the xHCI task on CPU 0; one log line when there is none. */
void xhci_init(void);
uint32_t xhci_op_read(struct xhci *hc, uint32_t reg);
void xhci_op_write(struct xhci *hc, uint32_t reg, uint32_t value);
void xhci_ring_doorbell(struct xhci *hc, unsigned slot, unsigned target);
bool xhci_ring_init(struct xhci_ring *r);
/* Queues one TRB (the cycle bit is set here, last); returns its bus address. */
uint64_t xhci_ring_push(struct xhci_ring *r, uint64_t param, uint32_t status, uint32_t control);
/* Queues a command, rings the host doorbell, waits (bounded) for its completion event. False with *why when
 * none came or it did not succeed; *slot gets the event's slot id. */
bool xhci_command(struct xhci *hc, uint64_t param, uint32_t control, uint8_t *slot, const char **why);
/* Waits (bounded) for the transfer event of the TRB at bus address trb; *residual gets its untransferred bytes. */
bool xhci_wait_transfer(struct xhci *hc, uint64_t trb, uint32_t *residual, const char **why);

/* xhci_dev.c */
void xhci_port_attach(struct xhci *hc, unsigned port);
void xhci_port_detach(struct xhci *hc, unsigned port);
/* Device i of 0..XHCI_DEVS-1: root ports first, then the devices behind hubs. */
struct xhci_port *xhci_dev_at(struct xhci *hc, unsigned i);
/* p's place (root_port, route, tier, speed, tt_*) is set: slot, address, descriptors, and a keyboard or a hub
 * configured. False when it was given up on (logged); its slot is then disabled and p released. */
bool xhci_dev_enumerate(struct xhci *hc, struct xhci_port *p);
/* p and every device behind it: slot disabled, one line each, released. */
void xhci_dev_detach(struct xhci *hc, struct xhci_port *p);
/* One control transfer on p's endpoint 0, data (if any) in p->buf; *got the bytes that came back. */
bool xhci_control(struct xhci *hc, struct xhci_port *p, uint8_t type, uint8_t request, uint16_t value,
                  uint16_t index, uint16_t length, uint32_t *got, const char **why);
/* "1.2.3": the root port and hub ports on the way to p, into out[USB_HUB_PATH_MAX]. */
void xhci_dev_path(const struct xhci_port *p, char *out);
/* Queues a transfer on p's interrupt IN endpoint into p->buf's report area. */
void xhci_dev_queue_report(struct xhci *hc, struct xhci_port *p, unsigned len);
#define XHCI_REPORT_AT 3072  /* the interrupt endpoint's buffer in p->buf */

/* usb_hub.c */
/* After the device descriptor named a hub: its hub descriptor read and judged (p->hub_ports). */
bool usb_hub_describe(struct xhci *hc, struct xhci_port *p, const char **why);
/* After SET_CONFIGURATION: ports powered, the status-change transfer queued, every port to be looked at. */
bool usb_hub_start(struct xhci *hc, struct xhci_port *p, unsigned report_len, const char **why);
/* A transfer event on a hub's status-change endpoint (outside any wait): the ports it names are noted. */
void usb_hub_transfer(struct xhci *hc, struct xhci_port *p, const struct xhci_event *ev);
/* From the task: every hub port noted as changed is looked at -- a device gone is detached, one come is
 * reset and enumerated. Bounded: a few passes, the rest at the next wake. */
void usb_hubs_look(struct xhci *hc);
/* A transfer event on a keyboard's endpoint, outside any wait: a report, or the end of the endpoint. */
void xhci_port_transfer(struct xhci *hc, const struct xhci_event *ev);
/* The characters a keyboard produced go to the console. */
void xhci_keys_out(const char *chars, unsigned n);

#endif
