/* kernel/drivers/usb/xhci.c: the xHCI USB host controller, enough of it for a boot keyboard (docs/usb.md). Found by
 * PCI class 0C/03/30; its BAR mapped even above 4 GiB (OVMF puts it there); taken from the firmware through
 * the USB Legacy Support capability (SeaBIOS and OVMF both drive it before us); halted, reset, given a device
 * context base array (with scratchpad pages when it asks), one command ring and one event ring, and run.
 * The devices on it are kernel/drivers/usb/xhci_dev.c's, the task that drives it kernel/drivers/usb/xhci_task.c's;
 * this file knows neither: a transfer event no wait asked for goes to the handler xhci_start was given.
 *
 * All of it runs in one task on CPU 0. The event ring's interrupt (an MSI or MSI-X where the controller has
 * either capability, else INTx through the IOAPIC; IMAN/IMOD either way) only acknowledges the controller and wakes
 * the task (which also wakes on deadlines of its own: xhci_sleep). With no message and an interrupt line another
 * PCI function also names, the task polls every POLL_MS instead: the irq layer gives each attach its own vector
 * and points the IOAPIC pin at it, so a second attach on a shared line would take the first device's interrupt
 * away.
 * Every wait on the controller is bounded and ends in one log line; every event TRB is judged
 * (kernel/drivers/usb/xhci_trb.c) before it is used. */
#include "kernel/drivers/usb/xhci.h"

#include <string.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/heap.h"
#include "kernel/log.h"
#include "kernel/task.h"

#define POLL_MS 10
#define IMOD_250NS 4000 /* at most one interrupt a millisecond */

/* Capability registers. */
#define CAP_LENGTH 0x00
#define CAP_HCSPARAMS1 0x04
#define CAP_HCSPARAMS2 0x08
#define CAP_HCCPARAMS1 0x10
#define CAP_DBOFF 0x14
#define CAP_RTSOFF 0x18
/* Operational registers (from CAPLENGTH). */
#define OP_USBCMD 0x00
#define OP_USBSTS 0x04
#define OP_PAGESIZE 0x08
#define OP_CRCR 0x18
#define OP_DCBAAP 0x30
#define OP_CONFIG 0x38
#define CMD_RUN (1u << 0)
#define CMD_RESET (1u << 1)
#define STS_HALTED (1u << 0)
#define STS_HOST_ERROR (1u << 2)
#define STS_EVENT (1u << 3)
#define CMD_INTERRUPTS (1u << 2)
#define STS_NOT_READY (1u << 11)
#define STS_CONTROLLER_ERROR (1u << 12)
/* Interrupter 0 (from RTSOFF). */
#define IR0_IMAN 0x20
#define IR0_IMOD 0x24
#define IMAN_PENDING (1u << 0)
#define IMAN_ENABLE (1u << 1)
#define IR0_ERSTSZ 0x28
#define IR0_ERSTBA 0x30
#define IR0_ERDP 0x38
#define ERDP_BUSY (1u << 3)
/* USB Legacy Support extended capability. */
#define XCAP_LEGACY 1
#define LEGACY_BIOS_OWNED (1u << 16)
#define LEGACY_OS_OWNED (1u << 24)
#define LEGACY_SMI_ENABLES 0x0000E011u
#define LEGACY_SMI_EVENTS 0xE0000000u
#define XCAPS_MAX 64

#define EVENT_TRBS 64
#define COMMAND_MS 500
#define HANDOFF_MS 1000
#define HALT_MS 100
#define RESET_MS 1000
#define BAD_EVENTS_LOGGED 3

#define PORTSC(n) (0x400 + 0x10 * ((n) - 1)) /* root port n's status and control (from CAPLENGTH) */

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
    uint32_t port_changed;      /* bit n: port n+1 had a status change event not yet looked at */
    uint64_t bad_events;
    void (*on_transfer)(void *arg, const struct xhci_event *ev); /* a transfer event no wait asked for */
    void *on_transfer_arg;
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

static struct xhci hc_state;

static uint32_t op_read(struct xhci *hc, uint32_t reg) { return pci_bar_read32(&hc->bar, hc->op + reg); }
static void op_write(struct xhci *hc, uint32_t reg, uint32_t v) { pci_bar_write32(&hc->bar, hc->op + reg, v); }

static void write64(struct xhci *hc, uint32_t offset, uint64_t v)
{
    pci_bar_write32(&hc->bar, offset, (uint32_t)v);
    pci_bar_write32(&hc->bar, offset + 4, (uint32_t)(v >> 32));
}

void xhci_ring_doorbell(struct xhci *hc, unsigned slot, unsigned target)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the TRBs are in memory before the controller is told */
    pci_bar_write32(&hc->bar, hc->db + 4 * slot, target);
}

/* Waits for (register & mask) == want, for at most ms milliseconds. */
static bool wait_op(struct xhci *hc, uint32_t reg, uint32_t mask, uint32_t want, unsigned ms)
{
    int64_t deadline = time_ns() + (int64_t)ms * 1000000;
    for (;;) {
        if ((op_read(hc, reg) & mask) == want)
            return true;
        if (time_ns() - deadline > 0)
            return false;
        task_yield();
    }
}

static void *page(void)
{
    void *p = kmalloc_aligned(4096, 4096);
    if (p)
        memset(p, 0, 4096);
    return p;
}

bool xhci_ring_init(struct xhci_ring *r)
{
    r->trbs = page();
    r->enqueue = 0;
    r->cycle = true;
    if (!r->trbs)
        return false;
    struct xhci_trb *link = &r->trbs[XHCI_RING_TRBS - 1];
    link->param = pci_dma_address(r->trbs);
    link->control = TRB_TYPE(TRB_LINK) | TRB_TOGGLE; /* cycle 0: the controller's until we pass it */
    return true;
}

uint64_t xhci_ring_push(struct xhci_ring *r, uint64_t param, uint32_t status, uint32_t control)
{
    volatile struct xhci_trb *t = &r->trbs[r->enqueue];
    t->param = param;
    t->status = status;
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the cycle bit hands the TRB over: written last */
    t->control = (control & ~TRB_CYCLE) | (r->cycle ? TRB_CYCLE : 0);
    uint64_t at = pci_dma_address((const void *)t);
    if (++r->enqueue == XHCI_RING_TRBS - 1) {
        volatile struct xhci_trb *link = &r->trbs[XHCI_RING_TRBS - 1];
        __atomic_thread_fence(__ATOMIC_RELEASE);
        link->control = TRB_TYPE(TRB_LINK) | TRB_TOGGLE | (r->cycle ? TRB_CYCLE : 0);
        r->enqueue = 0;
        r->cycle = !r->cycle;
    }
    return at;
}

/* ---- the event ring ----------------------------------------------------------------------------------- */

/* Takes every event the controller has written; returns the completion of the TRB at want (0: none wanted)
 * in *got when it is among them. */
static bool drain_events(struct xhci *hc, uint64_t want, struct xhci_event *got)
{
    bool found = false, any = false;
    for (unsigned n = 0; n < EVENT_TRBS; n++) {
        struct xhci_event ev;
        const char *why = "";
        enum xhci_event_kind kind = xhci_event_judge(&hc->events[hc->ev_dequeue], hc->ev_cycle, hc->max_slots,
                                                     hc->max_ports, &ev, &why);
        if (kind == XHCI_EVENT_NONE)
            break;
        any = true;
        if (++hc->ev_dequeue == EVENT_TRBS) {
            hc->ev_dequeue = 0;
            hc->ev_cycle = !hc->ev_cycle;
        }
        if (kind == XHCI_EVENT_BAD) {
            if (hc->bad_events++ < BAD_EVENTS_LOGGED)
                log_warn("usb: xHCI: %s: event ignored", why);
            continue;
        }
        if (kind == XHCI_EVENT_PORT && ev.port <= XHCI_MAX_PORTS) {
            hc->port_changed |= 1u << (ev.port - 1);
        } else if ((kind == XHCI_EVENT_COMMAND || kind == XHCI_EVENT_TRANSFER) && want && ev.trb == want) {
            *got = ev;
            found = true;
        } else if (kind == XHCI_EVENT_TRANSFER && hc->watch_trb && ev.trb == hc->watch_trb) {
            hc->watch_residual = ev.residual;
            hc->watch_code = ev.code;
        } else if (kind == XHCI_EVENT_TRANSFER && hc->on_transfer) {
            hc->on_transfer(hc->on_transfer_arg, &ev);
        }
    }
    if (any)
        write64(hc, hc->rt + IR0_ERDP, pci_dma_address(&hc->events[hc->ev_dequeue]) | ERDP_BUSY);
    return found;
}

static bool wait_event(struct xhci *hc, uint64_t trb, struct xhci_event *ev)
{
    int64_t deadline = time_ns() + (int64_t)COMMAND_MS * 1000000;
    for (;;) {
        if (drain_events(hc, trb, ev))
            return true;
        /* a control transfer whose data stage failed never reaches its status stage */
        if (hc->watch_trb && hc->watch_code && hc->watch_code != CC_SUCCESS && hc->watch_code != CC_SHORT_PACKET)
            return false;
        if (time_ns() - deadline > 0)
            return false;
        task_yield();
    }
}

bool xhci_command(struct xhci *hc, uint64_t param, uint32_t control, uint8_t *slot, const char **why)
{
    uint64_t trb = xhci_ring_push(&hc->cmd, param, 0, control);
    xhci_ring_doorbell(hc, 0, 0);
    struct xhci_event ev;
    if (!wait_event(hc, trb, &ev)) {
        *why = "the controller did not complete a command";
        return false;
    }
    if (ev.code != CC_SUCCESS) {
        *why = "the controller refused a command";
        return false;
    }
    if (slot)
        *slot = ev.slot;
    return true;
}

/* Waits (bounded) for the transfer event of the TRB at bus address trb; *residual gets its untransferred bytes. */
static bool wait_transfer(struct xhci *hc, uint64_t trb, uint32_t *residual, const char **why)
{
    struct xhci_event ev;
    if (!wait_event(hc, trb, &ev)) {
        *why = hc->watch_code ? "the device refused a request (stall or error)" : "the device did not answer";
        return false;
    }
    if (ev.code != CC_SUCCESS && ev.code != CC_SHORT_PACKET) {
        *why = "the device refused a request (stall or error)";
        return false;
    }
    *residual = ev.residual;
    return true;
}

bool xhci_control_transfer(struct xhci *hc, struct xhci_ring *ep0, unsigned slot, uint64_t setup, uint64_t data,
                           uint16_t length, uint32_t *got, const char **why)
{
    bool in = setup & 0x80;
    uint32_t trt = length ? (in ? 3u : 2u) : 0u;
    xhci_ring_push(ep0, setup, 8, TRB_TYPE(TRB_SETUP) | TRB_IDT | trt << 16);
    hc->watch_trb = 0;
    hc->watch_code = 0;
    hc->watch_residual = 0;
    if (length)
        hc->watch_trb = xhci_ring_push(ep0, data, length, TRB_TYPE(TRB_DATA) | TRB_ISP | (in ? TRB_DIR_IN : 0));
    uint64_t status = xhci_ring_push(ep0, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC | (length && in ? 0 : TRB_DIR_IN));
    xhci_ring_doorbell(hc, slot, 1);
    uint32_t residual = 0;
    bool ok = wait_transfer(hc, status, &residual, why);
    uint32_t short_by = hc->watch_code == CC_SHORT_PACKET ? hc->watch_residual : 0;
    hc->watch_trb = 0;
    if (!ok)
        return false;
    if (short_by > length) {
        *why = "the controller reports more bytes missing than were asked for";
        return false;
    }
    if (got)
        *got = length - short_by;
    return true;
}

/* ---- what the devices on it are given ------------------------------------------------------------------ */

uint32_t *xhci_context(const struct xhci *hc, void *base, unsigned index)
{
    return (uint32_t *)((uint8_t *)base + index * hc->ctx_size);
}

void xhci_set_device_context(struct xhci *hc, unsigned slot, uint64_t bus_address)
{
    hc->dcbaa[slot] = bus_address;
}

bool xhci_bad_event(struct xhci *hc) { return hc->bad_events++ < BAD_EVENTS_LOGGED; }

const struct pci_device *xhci_pci(const struct xhci *hc) { return hc->pci; }

uint32_t xhci_port_read(struct xhci *hc, unsigned n) { return op_read(hc, PORTSC(n)); }
void xhci_port_write(struct xhci *hc, unsigned n, uint32_t v) { op_write(hc, PORTSC(n), v); }

/* ---- bring-up ------------------------------------------------------------------------------------------ */

/* BIOS/OS handoff: ask for ownership, wait for the firmware to let go, and switch its SMIs off either way. */
static void take_from_firmware(struct xhci *hc, uint32_t hccparams1)
{
    uint32_t at = (hccparams1 >> 16) * 4;
    for (int n = 0; at && n < XCAPS_MAX && at + 8 <= hc->bar.size; n++) {
        uint32_t cap = pci_bar_read32(&hc->bar, at);
        if ((cap & 0xFF) == XCAP_LEGACY) {
            pci_bar_write8(&hc->bar, at + 3, 1); /* OS owned */
            int64_t deadline = time_ns() + (int64_t)HANDOFF_MS * 1000000;
            while ((pci_bar_read32(&hc->bar, at) & LEGACY_BIOS_OWNED) && time_ns() - deadline < 0)
                task_yield();
            if (pci_bar_read32(&hc->bar, at) & LEGACY_BIOS_OWNED) {
                log_warn("usb: xHCI: the firmware kept the controller past %u ms; taking it anyway", HANDOFF_MS);
                pci_bar_write8(&hc->bar, at + 2, 0);
            }
            uint32_t ctl = pci_bar_read32(&hc->bar, at + 4);
            pci_bar_write32(&hc->bar, at + 4, (ctl & ~LEGACY_SMI_ENABLES) | LEGACY_SMI_EVENTS);
            return;
        }
        uint32_t next = (cap >> 8) & 0xFF;
        at = next ? at + next * 4 : 0;
    }
}

/* Interrupt context: acknowledge (IMAN.IP and USBSTS.EINT are write-1-to-clear, which also drops the line)
 * and wake the task. On INTx a read of IMAN without IP set was not ours; a message is always ours, and the
 * controller clears IP itself as it sends one (as the xHCI specification has it, and QEMU does), so IP says
 * nothing then. */
static void xhci_irq(void *arg)
{
    struct xhci *hc = arg;
    uint32_t iman = pci_bar_read32(&hc->bar, hc->rt + IR0_IMAN);
    if (!hc->msi_vector && !(iman & IMAN_PENDING))
        return;
    hc->interrupts++;
    pci_bar_write32(&hc->bar, hc->op + OP_USBSTS, STS_EVENT);
    pci_bar_write32(&hc->bar, hc->rt + IR0_IMAN, IMAN_PENDING | IMAN_ENABLE);
    task_wake(hc->task);
}

/* The ISA line to take the interrupt on when there is no MSI, or 0 (with *why) to poll instead. */
static unsigned pick_line(struct xhci *hc, const char **why)
{
    uint8_t line = pci_interrupt_line(hc->pci);
    if (hc->pci->interrupt_pin == 0 || hc->pci->interrupt_pin > 4 || line == 0 || line >= 16) {
        *why = "the firmware routed it no ISA interrupt line";
        return 0;
    }
    for (unsigned i = 0; i < pci_device_count(); i++) {
        const struct pci_device *d = pci_device_at(i);
        if (d != hc->pci && d->interrupt_pin && pci_interrupt_line(d) == line) {
            *why = "its interrupt line is shared with another PCI function";
            return 0;
        }
    }
    return line;
}

/* BAR0 mapped, the capability registers read and the operational, runtime and doorbell registers placed inside
 * it; *hcs2 and *hcc1 for the steps after. */
static bool map_registers(struct xhci *hc, uint32_t *hcs2, uint32_t *hcc1, const char **why)
{
    if (!pci_read_bar(hc->pci, 0, &hc->bar) || hc->bar.is_io || hc->bar.size < 0x1000) {
        *why = "BAR0 is not a memory BAR of at least 4 KiB";
        return false;
    }
    if (!pci_map_bar(&hc->bar, why))
        return false;
    pci_enable(hc->pci, false, true, true);
    uint8_t caplength = pci_bar_read8(&hc->bar, CAP_LENGTH);
    uint32_t hcs1 = pci_bar_read32(&hc->bar, CAP_HCSPARAMS1);
    *hcs2 = pci_bar_read32(&hc->bar, CAP_HCSPARAMS2);
    *hcc1 = pci_bar_read32(&hc->bar, CAP_HCCPARAMS1);
    hc->op = caplength;
    hc->db = pci_bar_read32(&hc->bar, CAP_DBOFF) & ~3u;
    hc->rt = pci_bar_read32(&hc->bar, CAP_RTSOFF) & ~0x1Fu;
    hc->max_slots = hcs1 & 0xFF;
    hc->max_ports = hcs1 >> 24;
    hc->ctx_size = (*hcc1 & (1u << 2)) ? 64 : 32;
    if (caplength < 0x20 || hc->max_slots == 0 || hc->max_ports == 0 ||
        hc->op + 0x400 + 0x10 * hc->max_ports > hc->bar.size || hc->rt + 0x40 > hc->bar.size ||
        hc->db + 4 * (hc->max_slots + 1) > hc->bar.size) {
        *why = "its capability registers describe registers outside BAR0";
        return false;
    }
    return true;
}

/* Halted, reset, and told how many slots it is to use. */
static bool halt_and_reset(struct xhci *hc, const char **why)
{
    op_write(hc, OP_USBCMD, op_read(hc, OP_USBCMD) & ~CMD_RUN);
    if (!wait_op(hc, OP_USBSTS, STS_HALTED, STS_HALTED, HALT_MS)) {
        *why = "it did not halt";
        return false;
    }
    op_write(hc, OP_USBCMD, CMD_RESET);
    if (!wait_op(hc, OP_USBCMD, CMD_RESET, 0, RESET_MS) || !wait_op(hc, OP_USBSTS, STS_NOT_READY, 0, RESET_MS)) {
        *why = "it did not finish its reset";
        return false;
    }
    if (!(op_read(hc, OP_PAGESIZE) & 1)) {
        *why = "it does not take 4 KiB pages";
        return false;
    }
    op_write(hc, OP_CONFIG, hc->max_slots);
    return true;
}

/* The device context base array (with the scratchpad pages HCSPARAMS2 asks for), the command ring and the event
 * ring, allocated and handed to the controller; the event ring's segment table last, which starts it. */
static bool give_memory(struct xhci *hc, uint32_t hcs2, const char **why)
{
    hc->dcbaa = page();
    unsigned scratch = ((hcs2 >> 21) & 0x1F) << 5 | (hcs2 >> 27);
    if (scratch > 4096 / 8) {
        *why = "it asks for more scratchpad pages than one page of pointers holds";
        return false;
    }
    uint64_t *scratch_array = scratch ? page() : 0;
    struct xhci_trb *erst = page();
    hc->events = page();
    if (!hc->dcbaa || (scratch && !scratch_array) || !erst || !hc->events || !xhci_ring_init(&hc->cmd)) {
        *why = "no memory for its rings";
        return false;
    }
    for (unsigned i = 0; i < scratch; i++) {
        void *p = page();
        if (!p) {
            *why = "no memory for its scratchpad pages";
            return false;
        }
        scratch_array[i] = pci_dma_address(p);
    }
    if (scratch)
        hc->dcbaa[0] = pci_dma_address(scratch_array);
    write64(hc, hc->op + OP_DCBAAP, pci_dma_address(hc->dcbaa));
    write64(hc, hc->op + OP_CRCR, pci_dma_address(hc->cmd.trbs) | 1); /* ring cycle state 1 */

    erst[0].param = pci_dma_address(hc->events);
    erst[0].status = EVENT_TRBS;
    hc->ev_dequeue = 0;
    hc->ev_cycle = true;
    pci_bar_write32(&hc->bar, hc->rt + IR0_ERSTSZ, 1);
    write64(hc, hc->rt + IR0_ERDP, pci_dma_address(hc->events));
    write64(hc, hc->rt + IR0_ERSTBA, pci_dma_address(erst)); /* last: this starts the event ring */
    return true;
}

/* Attached once the registers are mapped and placed, before the controller runs with interrupts on: a message
 * first (MSI or MSI-X: its own vector, no line to share), else the INTx line, else the poll (hc->irq false). */
static void attach_interrupt(struct xhci *hc)
{
    hc->msi_kind = "";
    hc->msi_vector = irq_attach_msi(hc->pci, xhci_irq, hc, &hc->msi_kind);
    hc->line = 0;
    if (!hc->msi_vector) {
        hc->line = pick_line(hc, &hc->poll_why);
        if (hc->line && !irq_attach_isa(hc->line, xhci_irq, hc)) {
            hc->poll_why = "no interrupt vector was left";
            hc->line = 0;
        }
    }
    hc->irq = hc->msi_vector || hc->line;
}

/* Run, with the event ring's interrupter on when there is an interrupt to take. */
static bool run(struct xhci *hc, const char **why)
{
    if (hc->irq) {
        pci_bar_write32(&hc->bar, hc->rt + IR0_IMOD, IMOD_250NS);
        pci_bar_write32(&hc->bar, hc->rt + IR0_IMAN, IMAN_PENDING | IMAN_ENABLE);
    }
    op_write(hc, OP_USBCMD, CMD_RUN | (hc->irq ? CMD_INTERRUPTS : 0));
    if (!wait_op(hc, OP_USBSTS, STS_HALTED, 0, HALT_MS)) {
        *why = "it did not start running";
        return false;
    }
    if (op_read(hc, OP_USBSTS) & (STS_HOST_ERROR | STS_CONTROLLER_ERROR)) {
        *why = "it reports a host system or controller error";
        return false;
    }
    return true;
}

static bool bring_up(struct xhci *hc, const char **why)
{
    uint32_t hcs2, hcc1;
    if (!map_registers(hc, &hcs2, &hcc1, why))
        return false;
    take_from_firmware(hc, hcc1);
    if (!halt_and_reset(hc, why) || !give_memory(hc, hcs2, why))
        return false;
    attach_interrupt(hc);
    return run(hc, why);
}

/* ---- for the task ---------------------------------------------------------------------------------------- */

unsigned xhci_root_ports(const struct xhci *hc)
{
    return hc->max_ports < XHCI_MAX_PORTS ? hc->max_ports : XHCI_MAX_PORTS;
}

bool xhci_start(struct xhci *hc, void (*on_transfer)(void *arg, const struct xhci_event *ev), void *arg)
{
    const char *why = "";
    hc->task = task_current();
    hc->on_transfer = on_transfer;
    hc->on_transfer_arg = arg;
    if (!bring_up(hc, &why)) {
        log_warn("usb: xHCI %04x:%04x: %s -- no USB keyboard", hc->pci->vendor, hc->pci->device, why);
        return false;
    }
    unsigned ports = xhci_root_ports(hc);
    if (hc->msi_vector)
        log_info("usb: xHCI %04x:%04x: %u ports, %u slots, event ring interrupt on %s vector 0x%x",
                 hc->pci->vendor, hc->pci->device, hc->max_ports, hc->max_slots, hc->msi_kind, hc->msi_vector);
    else if (hc->irq)
        log_info("usb: xHCI %04x:%04x: %u ports, %u slots, event ring interrupt on irq %u (no MSI: %s)",
                 hc->pci->vendor, hc->pci->device, hc->max_ports, hc->max_slots, hc->line, hc->msi_kind);
    else
        log_info("usb: xHCI %04x:%04x: %u ports, %u slots, event ring polled every %u ms (no MSI: %s; %s)",
                 hc->pci->vendor, hc->pci->device, hc->max_ports, hc->max_slots, POLL_MS, hc->msi_kind, hc->poll_why);
    if (ports < hc->max_ports)
        log_warn("usb: xHCI: ports above %u are not driven", XHCI_MAX_PORTS);
    hc->port_changed = ports == 32 ? 0xFFFFFFFFu : (1u << ports) - 1; /* look at every port once */
    return true;
}

void xhci_events(struct xhci *hc)
{
    struct xhci_event none;
    drain_events(hc, 0, &none);
    if (hc->interrupts && !hc->told_interrupt) {
        /* Once: that the interrupt chosen at bring-up is delivered, not just programmed. */
        hc->told_interrupt = true;
        log_info("usb: xHCI %04x:%04x: first event ring interrupt taken", hc->pci->vendor, hc->pci->device);
    }
}

unsigned xhci_port_change_take(struct xhci *hc)
{
    if (!hc->port_changed)
        return 0;
    unsigned n = (unsigned)__builtin_ctz(hc->port_changed) + 1;
    hc->port_changed &= ~(1u << (n - 1));
    return n;
}

void xhci_sleep(struct xhci *hc, int64_t deadline)
{
    if (hc->irq)
        task_block_until(deadline, TASK_WAIT_DEVICE); /* the interrupt, a repeat falling due, or the safety net */
    else
        task_sleep_ms(POLL_MS);
}

struct xhci *xhci_find(void)
{
    for (unsigned i = 0; i < pci_device_count(); i++) {
        const struct pci_device *d = pci_device_at(i);
        if (d->class_code == 0x0C && d->subclass == 0x03 && d->prog_if == 0x30) {
            hc_state.pci = d;
            return &hc_state;
        }
    }
    log_info("usb: no xHCI controller: no PCI function of class 0c/03/30; console input from COM1 and PS/2");
    return 0;
}
