/* kernel/drivers/usb/xhci.c: the xHCI USB host controller, enough of it for a boot keyboard (docs/usb.md). Found by
 * PCI class 0C/03/30; its BAR mapped even above 4 GiB (OVMF puts it there); taken from the firmware through
 * the USB Legacy Support capability (SeaBIOS and OVMF both drive it before us); halted, reset, given a device
 * context base array (with scratchpad pages when it asks), one command ring and one event ring, and run.
 * Root ports are enumerated by kernel/drivers/usb/xhci_dev.c.
 *
 * All of it runs in one task on CPU 0. The event ring's interrupt (an MSI or MSI-X where the controller has
 * either capability, else INTx through the IOAPIC; IMAN/IMOD either way) only acknowledges the controller and wakes
 * the task; the task also wakes for key repeat and, as a safety net for an edge missed, every SAFETY_MS. With
 * no message and an interrupt line another PCI function also names, the task polls every POLL_MS instead: the irq
 * layer gives each attach its own vector and points the IOAPIC pin at it, so a second attach on a shared line
 * would take the first device's interrupt away.
 * Every wait on the controller is bounded and ends in one log line; every event TRB is judged
 * (kernel/drivers/usb/xhci_trb.c) before it is used. */
#include "kernel/drivers/usb/xhci.h"

#include <string.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "kernel/heap.h"
#include "kernel/log.h"
#include "kernel/task.h"

#define POLL_MS 10
#define SAFETY_MS 1000
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

static struct xhci hc_state;

uint32_t xhci_op_read(struct xhci *hc, uint32_t reg) { return pci_bar_read32(&hc->bar, hc->op + reg); }
void xhci_op_write(struct xhci *hc, uint32_t reg, uint32_t v) { pci_bar_write32(&hc->bar, hc->op + reg, v); }

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
        if ((xhci_op_read(hc, reg) & mask) == want)
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
        } else if (kind == XHCI_EVENT_TRANSFER) {
            xhci_port_transfer(hc, &ev);
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

bool xhci_wait_transfer(struct xhci *hc, uint64_t trb, uint32_t *residual, const char **why)
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

static bool bring_up(struct xhci *hc, const char **why)
{
    if (!pci_read_bar(hc->pci, 0, &hc->bar) || hc->bar.is_io || hc->bar.size < 0x1000) {
        *why = "BAR0 is not a memory BAR of at least 4 KiB";
        return false;
    }
    if (!pci_map_bar(&hc->bar, why))
        return false;
    pci_enable(hc->pci, false, true, true);
    uint8_t caplength = pci_bar_read8(&hc->bar, CAP_LENGTH);
    uint32_t hcs1 = pci_bar_read32(&hc->bar, CAP_HCSPARAMS1), hcs2 = pci_bar_read32(&hc->bar, CAP_HCSPARAMS2);
    uint32_t hcc1 = pci_bar_read32(&hc->bar, CAP_HCCPARAMS1);
    hc->op = caplength;
    hc->db = pci_bar_read32(&hc->bar, CAP_DBOFF) & ~3u;
    hc->rt = pci_bar_read32(&hc->bar, CAP_RTSOFF) & ~0x1Fu;
    hc->max_slots = hcs1 & 0xFF;
    hc->max_ports = hcs1 >> 24;
    hc->ctx_size = (hcc1 & (1u << 2)) ? 64 : 32;
    if (caplength < 0x20 || hc->max_slots == 0 || hc->max_ports == 0 ||
        hc->op + 0x400 + 0x10 * hc->max_ports > hc->bar.size || hc->rt + 0x40 > hc->bar.size ||
        hc->db + 4 * (hc->max_slots + 1) > hc->bar.size) {
        *why = "its capability registers describe registers outside BAR0";
        return false;
    }
    take_from_firmware(hc, hcc1);

    xhci_op_write(hc, OP_USBCMD, xhci_op_read(hc, OP_USBCMD) & ~CMD_RUN);
    if (!wait_op(hc, OP_USBSTS, STS_HALTED, STS_HALTED, HALT_MS)) {
        *why = "it did not halt";
        return false;
    }
    xhci_op_write(hc, OP_USBCMD, CMD_RESET);
    if (!wait_op(hc, OP_USBCMD, CMD_RESET, 0, RESET_MS) || !wait_op(hc, OP_USBSTS, STS_NOT_READY, 0, RESET_MS)) {
        *why = "it did not finish its reset";
        return false;
    }
    if (!(xhci_op_read(hc, OP_PAGESIZE) & 1)) {
        *why = "it does not take 4 KiB pages";
        return false;
    }
    xhci_op_write(hc, OP_CONFIG, hc->max_slots);

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

    /* Attached once the registers are mapped and placed, before the controller runs with interrupts on: a
     * message first (MSI or MSI-X: its own vector, no line to share), else the INTx line, else the poll. */
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
    if (hc->irq) {
        pci_bar_write32(&hc->bar, hc->rt + IR0_IMOD, IMOD_250NS);
        pci_bar_write32(&hc->bar, hc->rt + IR0_IMAN, IMAN_PENDING | IMAN_ENABLE);
    }
    xhci_op_write(hc, OP_USBCMD, CMD_RUN | (hc->irq ? CMD_INTERRUPTS : 0));
    if (!wait_op(hc, OP_USBSTS, STS_HALTED, 0, HALT_MS)) {
        *why = "it did not start running";
        return false;
    }
    if (xhci_op_read(hc, OP_USBSTS) & (STS_HOST_ERROR | STS_CONTROLLER_ERROR)) {
        *why = "it reports a host system or controller error";
        return false;
    }
    return true;
}

/* ---- the task ------------------------------------------------------------------------------------------ */

#define PORTSC(n) (0x400 + 0x10 * ((n) - 1))
#define PORT_CONNECTED (1u << 0)
#define PORT_CONNECT_CHANGE (1u << 17)
#define PORT_CHANGES 0x00FE0000u
#define PORT_KEEP 0x0E00C200u /* power, indicator, wake enables: written back as read, nothing else */

static void port_look(struct xhci *hc, unsigned n)
{
    uint32_t sc = xhci_op_read(hc, PORTSC(n));
    xhci_op_write(hc, PORTSC(n), (sc & PORT_KEEP) | (sc & PORT_CHANGES)); /* acknowledge the changes */
    struct xhci_port *p = &hc->ports[n];
    bool was = p->slot || p->failed;
    if (was && (!(sc & PORT_CONNECTED) || (sc & PORT_CONNECT_CHANGE)))
        xhci_port_detach(hc, n); /* gone, or gone and back between two looks */
    if ((sc & PORT_CONNECTED) && !p->slot && !p->failed)
        xhci_port_attach(hc, n);
}

static void xhci_task(void *arg)
{
    struct xhci *hc = arg;
    const char *why = "";
    hc->task = task_current();
    if (!bring_up(hc, &why)) {
        log_warn("usb: xHCI %04x:%04x: %s -- no USB keyboard", hc->pci->vendor, hc->pci->device, why);
        task_exit();
    }
    unsigned ports = hc->max_ports < XHCI_MAX_PORTS ? hc->max_ports : XHCI_MAX_PORTS;
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
    for (;;) {
        struct xhci_event none;
        drain_events(hc, 0, &none);
        if (hc->interrupts && !hc->told_interrupt) {
            /* Once: that the interrupt chosen at bring-up is delivered, not just programmed. */
            hc->told_interrupt = true;
            log_info("usb: xHCI %04x:%04x: first event ring interrupt taken", hc->pci->vendor, hc->pci->device);
        }
        while (hc->port_changed) {
            unsigned n = (unsigned)__builtin_ctz(hc->port_changed) + 1;
            hc->port_changed &= ~(1u << (n - 1));
            if (n <= ports)
                port_look(hc, n);
        }
        usb_hubs_look(hc);
        int64_t now = time_ns(), next = now + (int64_t)SAFETY_MS * 1000000;
        for (unsigned i = 0; i < XHCI_DEVS; i++) { /* keyboards on root ports and behind hubs */
            char out[USB_KBD_OUT_MAX];
            struct xhci_port *d = xhci_dev_at(hc, i);
            if (d->keyboard) {
                size_t k = usb_kbd_tick(&d->kbd, now, out);
                xhci_keys_out(out, (unsigned)k);
                int64_t due = usb_kbd_deadline(&d->kbd);
                if (due - next < 0)
                    next = due;
            }
        }
        if (hc->irq)
            task_block_until(next); /* the interrupt, a repeat falling due, or the safety net */
        else
            task_sleep_ms(POLL_MS);
    }
}

void xhci_keys_out(const char *chars, unsigned n)
{
    /* console_input_char is single-producer, written from interrupts on CPU 0: this task is on CPU 0 and holds
     * interrupts off meanwhile, so it is never beside one of those. */
    unsigned long flags = irq_save();
    for (unsigned i = 0; i < n; i++)
        console_input_char(chars[i]);
    irq_restore(flags);
}

void xhci_init(void)
{
    for (unsigned i = 0; i < pci_device_count(); i++) {
        const struct pci_device *d = pci_device_at(i);
        if (d->class_code == 0x0C && d->subclass == 0x03 && d->prog_if == 0x30) {
            hc_state.pci = d;
            if (!task_spawn("xhci", xhci_task, &hc_state, 0))
                log_warn("usb: xHCI %04x:%04x: no memory for its task -- no USB keyboard", d->vendor, d->device);
            return;
        }
    }
    log_info("usb: no xHCI controller: no PCI function of class 0c/03/30; console input from COM1 and PS/2");
}
