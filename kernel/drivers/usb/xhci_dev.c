/* kernel/drivers/usb/xhci_dev.c: a device on an xHCI root port or behind hubs (see kernel/drivers/usb/xhci.h) -- root
 * port reset, Enable Slot, Address Device (its slot context naming its root port, route string, speed and
 * transaction translator), the device and configuration descriptors (judged by kernel/drivers/usb/usb_desc.c), and
 * for a boot keyboard: Configure Endpoint, SET_CONFIGURATION, SET_PROTOCOL(boot), SET_IDLE(0), and one
 * transfer always queued on its interrupt IN endpoint, whose reports go to kernel/drivers/usb/usb_kbd.c; for a hub
 * the same with the Hub flag and its port count, the rest in kernel/drivers/usb/usb_hub.c. Anything else --
 * another kind of device, one that does not answer -- is one log line and the port is left alone until it is
 * unplugged. */
#include "kernel/drivers/usb/xhci.h"

#include <string.h>

#include "hal/cpu.h"
#include "kernel/drivers/usb/usb_desc.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/log.h"
#include "kernel/task.h"

#define PORTSC(n) (0x400 + 0x10 * ((n) - 1))
#define PORT_CONNECTED (1u << 0)
#define PORT_ENABLED (1u << 1)
#define PORT_RESET (1u << 4)
#define PORT_RESET_CHANGE (1u << 21)
#define PORT_CHANGES 0x00FE0000u
#define PORT_KEEP 0x0E00C200u
#define PORT_SPEED(sc) (((sc) >> 10) & 0xF)
#define SPEED_FULL 1
#define SPEED_LOW 2
#define SPEED_HIGH 3
#define PORT_RESET_MS 500

#define EP_TYPE_CONTROL 4
#define EP_TYPE_INTERRUPT_IN 7
#define DATA_AT 0        /* control transfer data in p->buf */
#define REPORT_AT XHCI_REPORT_AT
#define REPORT_MAX 64
#define DATA_MAX 3072    /* the longest configuration descriptor set taken */

#define REQ_GET_DESCRIPTOR 6
#define REQ_SET_CONFIGURATION 9
#define REQ_SET_IDLE 0x0A
#define REQ_SET_PROTOCOL 0x0B

static uint32_t *ctx(struct xhci *hc, void *base, unsigned index)
{
    return (uint32_t *)((uint8_t *)base + index * hc->ctx_size);
}

static void put64(uint32_t *dw, uint64_t v)
{
    dw[0] = (uint32_t)v;
    dw[1] = (uint32_t)(v >> 32);
}

static unsigned report_len(const struct usb_kbd_iface *kb)
{
    return kb->max_packet < REPORT_MAX ? kb->max_packet : REPORT_MAX;
}

struct xhci_port *xhci_dev_at(struct xhci *hc, unsigned i)
{
    return i < XHCI_MAX_PORTS ? &hc->ports[i + 1] : &hc->behind[i - XHCI_MAX_PORTS];
}

void xhci_dev_path(const struct xhci_port *p, char *out)
{
    usb_hub_path(p->root_port, p->route, p->tier, out);
}

/* " (behind hub vvvv:pppp)" for a device behind a hub, "" on a root port. */
static const char *behind(const struct xhci_port *p, char *out, size_t cap)
{
    out[0] = 0;
    if (p->parent)
        ksnprintf(out, cap, " (behind hub %04x:%04x)", p->parent->vendor, p->parent->product);
    return out;
}

/* The slot context (input context entry 1): where the device sits and how many endpoint contexts follow. */
static void slot_context(struct xhci *hc, struct xhci_port *p, unsigned entries)
{
    uint32_t *sl = ctx(hc, p->in_ctx, 1);
    sl[0] = (p->route & 0xFFFFF) | (uint32_t)p->speed << 20 | (p->hub ? 1u << 26 : 0) | entries << 27;
    sl[1] = (uint32_t)p->root_port << 16 | (p->hub ? (uint32_t)p->hub_ports << 24 : 0);
    sl[2] = p->tt_slot | (uint32_t)p->tt_port << 8 | (p->hub ? (uint32_t)p->hub_think << 16 : 0);
}

bool xhci_control(struct xhci *hc, struct xhci_port *p, uint8_t type, uint8_t request, uint16_t value,
                  uint16_t index, uint16_t length, uint32_t *got, const char **why)
{
    bool in = type & 0x80;
    memset(p->buf + DATA_AT, 0, DATA_MAX);
    uint64_t setup = type | (uint64_t)request << 8 | (uint64_t)value << 16 | (uint64_t)index << 32 |
                     (uint64_t)length << 48;
    uint32_t trt = length ? (in ? 3u : 2u) : 0u;
    xhci_ring_push(&p->ep0, setup, 8, TRB_TYPE(TRB_SETUP) | TRB_IDT | trt << 16);
    hc->watch_trb = 0;
    hc->watch_code = 0;
    hc->watch_residual = 0;
    if (length)
        hc->watch_trb = xhci_ring_push(&p->ep0, pci_dma_address(p->buf + DATA_AT), length,
                                       TRB_TYPE(TRB_DATA) | TRB_ISP | (in ? TRB_DIR_IN : 0));
    uint64_t status = xhci_ring_push(&p->ep0, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC | (length && in ? 0 : TRB_DIR_IN));
    xhci_ring_doorbell(hc, p->slot, 1);
    uint32_t residual = 0;
    bool ok = xhci_wait_transfer(hc, status, &residual, why);
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

static bool get_descriptor(struct xhci *hc, struct xhci_port *p, uint8_t kind, uint16_t length, uint32_t *got,
                           const char **why)
{
    return xhci_control(hc, p, 0x80, REQ_GET_DESCRIPTOR, (uint16_t)(kind << 8), 0, length, got, why);
}

/* The xHCI interval exponent (2^n x 125 us) for an interrupt endpoint's bInterval. */
static unsigned interval_exponent(unsigned speed, uint8_t b_interval)
{
    if (speed == SPEED_FULL || speed == SPEED_LOW) { /* bInterval in 1 ms frames */
        unsigned e = 3;
        while (e < 10 && (1u << (e + 1)) <= (unsigned)b_interval * 8)
            e++;
        return e;
    }
    return b_interval > 16 ? 15 : b_interval - 1u; /* 2^(bInterval-1) microframes */
}

static bool port_reset(struct xhci *hc, unsigned n, uint32_t *sc_out)
{
    uint32_t sc = xhci_op_read(hc, PORTSC(n));
    xhci_op_write(hc, PORTSC(n), (sc & PORT_KEEP) | PORT_RESET);
    int64_t deadline = time_ns() + (int64_t)PORT_RESET_MS * 1000000;
    while (!((sc = xhci_op_read(hc, PORTSC(n))) & PORT_RESET_CHANGE) && time_ns() - deadline < 0)
        task_yield();
    xhci_op_write(hc, PORTSC(n), (sc & PORT_KEEP) | (sc & PORT_CHANGES & ~(1u << 17)));
    *sc_out = sc;
    return (sc & PORT_RESET_CHANGE) && (sc & PORT_ENABLED) && (sc & PORT_CONNECTED);
}

static void release(struct xhci *hc, struct xhci_port *p)
{
    if (p->slot)
        hc->dcbaa[p->slot] = 0;
    kfree(p->in_ctx);
    kfree(p->out_ctx);
    kfree(p->ep0.trbs);
    kfree(p->intr.trbs);
    kfree(p->buf);
    memset(p, 0, sizeof *p);
}

void xhci_dev_queue_report(struct xhci *hc, struct xhci_port *p, unsigned len)
{
    p->report_len = (uint16_t)len;
    p->report_trb = xhci_ring_push(&p->intr, pci_dma_address(p->buf + REPORT_AT), len,
                                   TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    xhci_ring_doorbell(hc, p->slot, p->dci);
}

/* Everything after the port reset; false with *why, or with *why NULL when the failure was already logged. */
static bool enumerate(struct xhci *hc, struct xhci_port *p, const char *path, const char **why)
{
    uint8_t slot = 0;
    unsigned speed = p->speed;
    char hub_id[32];
    if (!xhci_command(hc, 0, TRB_TYPE(TRB_ENABLE_SLOT), &slot, why))
        return false;
    for (unsigned i = 0; i < XHCI_DEVS; i++)
        if (slot == 0 || (xhci_dev_at(hc, i) != p && xhci_dev_at(hc, i)->slot == slot)) {
            *why = "the controller handed out a slot id that is zero or already in use";
            return false;
        }
    p->slot = slot;
    p->in_ctx = kmalloc_aligned(4096, 4096);
    p->out_ctx = kmalloc_aligned(4096, 4096);
    p->buf = kmalloc_aligned(4096, 4096);
    if (!p->in_ctx || !p->out_ctx || !p->buf || !xhci_ring_init(&p->ep0) || !xhci_ring_init(&p->intr)) {
        *why = "no memory for its contexts";
        return false;
    }
    memset(p->in_ctx, 0, 4096);
    memset(p->out_ctx, 0, 4096);
    hc->dcbaa[slot] = pci_dma_address(p->out_ctx);

    unsigned mps0 = speed == SPEED_HIGH ? 64 : speed >= 4 ? 512 : 8;
    ctx(hc, p->in_ctx, 0)[1] = 0x3; /* add the slot and endpoint 0 */
    slot_context(hc, p, 1);
    uint32_t *ep0 = ctx(hc, p->in_ctx, 2);
    ep0[1] = 3u << 1 | EP_TYPE_CONTROL << 3 | mps0 << 16;
    put64(ep0 + 2, pci_dma_address(p->ep0.trbs) | 1);
    ep0[4] = 8;
    if (!xhci_command(hc, pci_dma_address(p->in_ctx), TRB_TYPE(TRB_ADDRESS_DEVICE) | TRB_SLOT(slot), 0, why))
        return false;

    uint32_t got = 0;
    if (!get_descriptor(hc, p, USB_DESC_DEVICE, 8, &got, why))
        return false;
    uint8_t dev_mps = p->buf[DATA_AT + 7];
    if (got == 8 && speed <= SPEED_LOW && dev_mps != mps0 && (dev_mps == 16 || dev_mps == 32 || dev_mps == 64)) {
        ctx(hc, p->in_ctx, 0)[0] = 0;
        ctx(hc, p->in_ctx, 0)[1] = 0x2; /* evaluate endpoint 0 */
        ep0[1] = 3u << 1 | EP_TYPE_CONTROL << 3 | (uint32_t)dev_mps << 16;
        if (!xhci_command(hc, pci_dma_address(p->in_ctx), TRB_TYPE(TRB_EVALUATE_CONTEXT) | TRB_SLOT(slot), 0, why))
            return false;
    }
    struct usb_device_info info;
    if (!get_descriptor(hc, p, USB_DESC_DEVICE, USB_DEVICE_DESC_LEN, &got, why) ||
        !usb_device_desc_parse(p->buf + DATA_AT, got, &info, why))
        return false;
    p->vendor = info.vendor;
    p->product = info.product;
    bool hub = info.device_class == USB_CLASS_HUB;
    if (!get_descriptor(hc, p, USB_DESC_CONFIG, USB_CONFIG_DESC_LEN, &got, why))
        return false;
    uint16_t total = usb_config_total_length(p->buf + DATA_AT, got, why);
    if (total == 0)
        return false;
    if (total > DATA_MAX) {
        *why = "its configuration is longer than 3 KiB";
        return false;
    }
    if (!get_descriptor(hc, p, USB_DESC_CONFIG, total, &got, why))
        return false;
    struct usb_kbd_iface kb;
    enum usb_config_verdict v = hub ? usb_config_find_hub(p->buf + DATA_AT, got, &kb, why)
                                    : usb_config_find_keyboard(p->buf + DATA_AT, got, &kb, why);
    if (v == USB_CONFIG_BAD)
        return false;
    if (v == USB_CONFIG_NO_KEYBOARD && hub) {
        *why = "the hub has no hub interface with a status-change endpoint";
        return false;
    }
    if (v == USB_CONFIG_NO_KEYBOARD) {
        log_info("usb: port %s: device %04x:%04x (class %02x) is not a boot keyboard: left alone", path,
                 info.vendor, info.product, info.device_class);
        *why = 0;
        return false;
    }

    if (hub && !usb_hub_describe(hc, p, why))
        return false;
    p->dci = (uint8_t)((kb.endpoint & 0xF) * 2 + 1);
    memset(p->in_ctx, 0, 4096);
    ctx(hc, p->in_ctx, 0)[1] = 1u | 1u << p->dci;
    p->hub = hub; /* the slot context says Hub and its port count from here on */
    slot_context(hc, p, p->dci);
    uint32_t *ep = ctx(hc, p->in_ctx, 1 + p->dci);
    ep[0] = interval_exponent(speed, kb.interval) << 16;
    ep[1] = 3u << 1 | EP_TYPE_INTERRUPT_IN << 3 | (uint32_t)kb.max_packet << 16;
    put64(ep + 2, pci_dma_address(p->intr.trbs) | 1);
    ep[4] = 8u | (uint32_t)kb.max_packet << 16;
    if (!xhci_command(hc, pci_dma_address(p->in_ctx), TRB_TYPE(TRB_CONFIGURE_ENDPOINT) | TRB_SLOT(slot), 0, why))
        return false;
    if (!xhci_control(hc, p, 0x00, REQ_SET_CONFIGURATION, kb.config_value, 0, 0, 0, why))
        return false;
    if (hub) {
        if (!usb_hub_start(hc, p, report_len(&kb), why))
            return false;
        log_info("usb: xHCI %04x:%04x: port %s%s: hub %04x:%04x, %u ports, slot %u", hc->pci->vendor,
                 hc->pci->device, path, behind(p, hub_id, sizeof hub_id), info.vendor, info.product, p->hub_ports,
                 slot);
        return true;
    }
    if (!xhci_control(hc, p, 0x21, REQ_SET_PROTOCOL, 0, kb.interface, 0, 0, why))
        return false;
    const char *idle_why;
    (void)xhci_control(hc, p, 0x21, REQ_SET_IDLE, 0, kb.interface, 0, 0, &idle_why); /* optional: some stall it */

    usb_kbd_init(&p->kbd);
    p->keyboard = true;
    xhci_dev_queue_report(hc, p, report_len(&kb));
    log_info("usb: xHCI %04x:%04x: port %s%s: keyboard %04x:%04x (boot protocol), slot %u", hc->pci->vendor,
             hc->pci->device, path, behind(p, hub_id, sizeof hub_id), info.vendor, info.product, slot);
    return true;
}

bool xhci_dev_enumerate(struct xhci *hc, struct xhci_port *p)
{
    char path[USB_HUB_PATH_MAX];
    const char *why = "";
    xhci_dev_path(p, path);
    if (enumerate(hc, p, path, &why))
        return true;
    if (why)
        log_warn("usb: port %s: %s: left alone", path, why);
    if (p->slot) {
        const char *ignored;
        xhci_command(hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(p->slot), 0, &ignored);
    }
    release(hc, p);
    return false;
}

void xhci_port_attach(struct xhci *hc, unsigned n)
{
    struct xhci_port *p = &hc->ports[n];
    uint32_t sc;
    if (!port_reset(hc, n, &sc)) {
        if (sc & PORT_CONNECTED) {
            log_warn("usb: port %u: the port did not come out of reset enabled: left alone", n);
            p->failed = true;
        }
        return;
    }
    unsigned speed = PORT_SPEED(sc);
    if (speed == 0 || speed > 5) {
        log_warn("usb: port %u: unknown port speed %u: left alone", n, speed);
        p->failed = true;
        return;
    }
    p->root_port = (uint8_t)n;
    p->speed = (uint8_t)speed;
    if (!xhci_dev_enumerate(hc, p))
        p->failed = true;
}

/* Depth-first, children before their hub; depth is bounded by the route string's tiers. */
static void detach_tree(struct xhci *hc, struct xhci_port *p, unsigned depth)
{
    if (p->hub_ports && depth <= USB_HUB_MAX_TIERS)
        for (unsigned i = 0; i < XHCI_BEHIND_HUBS; i++)
            if (hc->behind[i].used && hc->behind[i].parent == p)
                detach_tree(hc, &hc->behind[i], depth + 1);
    if (p->slot) {
        char path[USB_HUB_PATH_MAX];
        const char *why = "";
        uint8_t slot = p->slot;
        xhci_dev_path(p, path);
        bool ok = xhci_command(hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(slot), 0, &why);
        log_info("usb: port %s: %s unplugged, slot %u %s", path,
                 p->keyboard ? "keyboard" : p->hub_ports ? "hub" : "device", slot, ok ? "disabled" : why);
    }
    release(hc, p);
}

void xhci_dev_detach(struct xhci *hc, struct xhci_port *p) { detach_tree(hc, p, 0); }

void xhci_port_detach(struct xhci *hc, unsigned n) { detach_tree(hc, &hc->ports[n], 0); }

void xhci_port_transfer(struct xhci *hc, const struct xhci_event *ev)
{
    for (unsigned i = 0; i < XHCI_DEVS; i++) {
        struct xhci_port *p = xhci_dev_at(hc, i);
        if (!(p->keyboard || (p->hub && !p->hub_stopped)) || p->slot != ev->slot || p->dci != ev->endpoint)
            continue;
        char path[USB_HUB_PATH_MAX];
        xhci_dev_path(p, path);
        if (ev->trb != p->report_trb) {
            if (hc->bad_events++ < 3)
                log_warn("usb: port %s: a transfer event for a TRB never queued: ignored", path);
            return;
        }
        if (p->hub) {
            usb_hub_transfer(hc, p, ev);
            return;
        }
        unsigned len = p->report_len;
        if (ev->code != CC_SUCCESS && ev->code != CC_SHORT_PACKET) {
            log_warn("usb: port %s: keyboard endpoint stopped (completion code %u)", path, ev->code);
            p->keyboard = false;
            return;
        }
        if (ev->residual <= len) {
            char out[USB_KBD_OUT_MAX];
            size_t k = usb_kbd_report(&p->kbd, p->buf + REPORT_AT, len - ev->residual, time_ns(), out);
            xhci_keys_out(out, (unsigned)k);
        }
        xhci_dev_queue_report(hc, p, len);
        return;
    }
}
