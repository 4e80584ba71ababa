/* kernel/drivers/xhci.h: the xHCI driver's shared state and its two halves' calls -- kernel/drivers/xhci.c
 * brings the controller up and owns the command and event rings and the driver task; kernel/drivers/xhci_dev.c
 * enumerates a root port's device (slot, address, descriptors, configuration) and drives its keyboard
 * endpoint. Everything here runs in the one xHCI task, so nothing in it takes a lock. */
#ifndef KERNEL_DRIVERS_XHCI_H
#define KERNEL_DRIVERS_XHCI_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/pci.h"
#include "kernel/task.h"
#include "kernel/drivers/usb_kbd.h"
#include "kernel/drivers/xhci_trb.h"

#define XHCI_MAX_PORTS 32    /* root ports driven; the rest are logged and left alone */
#define XHCI_RING_TRBS 64    /* one 1 KiB segment, the last TRB a link back to the first */

struct xhci_ring {
    struct xhci_trb *trbs; /* XHCI_RING_TRBS, page-aligned so it never crosses a 64 KiB boundary */
    unsigned enqueue;
    bool cycle;            /* the producer cycle state */
};

/* A device on a root port. */
struct xhci_port {
    uint8_t slot;              /* 0: no device addressed here */
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
/* A transfer event on a keyboard's endpoint, outside any wait: a report, or the end of the endpoint. */
void xhci_port_transfer(struct xhci *hc, const struct xhci_event *ev);
/* The characters a keyboard produced go to the console. */
void xhci_keys_out(const char *chars, unsigned n);

#endif
