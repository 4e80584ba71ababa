/* kernel/drivers/usb/xhci_dev.c: a device on an xHCI root port or behind hubs (see kernel/drivers/usb/xhci_dev.h)
 * -- root port reset, Enable Slot, Address Device (its slot context naming its root port, route string, speed
 * and transaction translator), the device and configuration descriptors (judged by
 * kernel/drivers/usb/usb_desc.c), and for a boot keyboard: Configure Endpoint, SET_CONFIGURATION,
 * SET_PROTOCOL(boot), SET_IDLE(0), and one transfer always queued on its interrupt IN endpoint, whose reports go
 * to kernel/drivers/usb/usb_kbd.c and then to the console; for a hub the same with the Hub flag and its port
 * count, the rest in kernel/drivers/usb/usb_hub.c, which is given these devices through the USB core's
 * operations (kernel/drivers/usb/usb_host.h) implemented at the end of this file. Anything else -- another kind
 * of device, one that does not answer -- is one log line and the port is left alone until it is unplugged.
 * The controller itself is reached through its calls alone (kernel/drivers/usb/xhci.h). */
#include "kernel/drivers/usb/xhci_dev.h"

#include <stddef.h>
#include <string.h>

#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "kernel/drivers/usb/usb_desc.h"
#include "kernel/drivers/usb/usb_hub.h"
#include "kernel/drivers/usb/usb_hub_desc.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/log.h"
#include "kernel/task.h"

/* A root port's PORTSC. */
#define PORT_CONNECTED (1u << 0)
#define PORT_ENABLED (1u << 1)
#define PORT_RESET (1u << 4)
#define PORT_CONNECT_CHANGE (1u << 17)
#define PORT_RESET_CHANGE (1u << 21)
#define PORT_CHANGES 0x00FE0000u
#define PORT_KEEP 0x0E00C200u /* power, indicator, wake enables: written back as read, nothing else */
#define PORT_SPEED(sc) (((sc) >> 10) & 0xF)
#define SPEED_FULL 1
#define SPEED_LOW 2
#define SPEED_HIGH 3
#define PORT_RESET_MS 500

#define EP_TYPE_CONTROL 4
#define EP_TYPE_INTERRUPT_IN 7
#define DATA_AT 0        /* control transfer data in p->dev.buf */
#define REPORT_AT 3072   /* the interrupt endpoint's buffer in p->dev.buf */
#define REPORT_MAX 64
#define DATA_MAX 3072    /* the longest configuration descriptor set taken */

#define REQ_GET_DESCRIPTOR 6
#define REQ_SET_CONFIGURATION 9
#define REQ_SET_IDLE 0x0A
#define REQ_SET_PROTOCOL 0x0B

static struct xhci_port *port_of(struct usb_device *d)
{
    return (struct xhci_port *)((uint8_t *)d - offsetof(struct xhci_port, dev));
}

static struct xhci_bus *bus_of(struct usb_host *host)
{
    return (struct xhci_bus *)((uint8_t *)host - offsetof(struct xhci_bus, host));
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

/* Device i of 0..XHCI_DEVS-1: root ports first, then the devices behind hubs. */
static struct xhci_port *dev_at(struct xhci_bus *bus, unsigned i)
{
    return i < XHCI_MAX_PORTS ? &bus->ports[i + 1] : &bus->behind[i - XHCI_MAX_PORTS];
}

/* "1.2.3": the root port and hub ports on the way to p, into out[USB_HUB_PATH_MAX]. */
static void dev_path(const struct xhci_port *p, char *out)
{
    usb_hub_path(p->dev.root_port, p->dev.route, p->dev.tier, out);
}

/* " (behind hub vvvv:pppp)" for a device behind a hub, "" on a root port. */
static const char *behind(const struct xhci_port *p, char *out, size_t cap)
{
    out[0] = 0;
    if (p->dev.parent)
        ksnprintf(out, cap, " (behind hub %04x:%04x)", p->dev.parent->vendor, p->dev.parent->product);
    return out;
}

/* The characters a keyboard produced go to the console. */
static void keys_out(const char *chars, unsigned n)
{
    /* console_input_char is single-producer, written from interrupts on CPU 0: this task is on CPU 0 and holds
     * interrupts off meanwhile, so it is never beside one of those. */
    unsigned long flags = irq_save();
    for (unsigned i = 0; i < n; i++)
        console_input_char(chars[i]);
    irq_restore(flags);
}

/* The slot context (input context entry 1): where the device sits and how many endpoint contexts follow. */
static void slot_context(struct xhci *hc, struct xhci_port *p, unsigned entries)
{
    const struct usb_device *d = &p->dev;
    uint32_t *sl = xhci_context(hc, p->in_ctx, 1);
    sl[0] = (d->route & 0xFFFFF) | (uint32_t)d->speed << 20 | (d->hub ? 1u << 26 : 0) | entries << 27;
    sl[1] = (uint32_t)d->root_port << 16 | (d->hub ? (uint32_t)d->hub_ports << 24 : 0);
    sl[2] = d->tt_slot | (uint32_t)d->tt_port << 8 | (d->hub ? (uint32_t)d->hub_think << 16 : 0);
}

/* One control transfer on p's endpoint 0, data (if any) in p->dev.buf; *got the bytes that came back. */
static bool control(struct xhci *hc, struct xhci_port *p, uint8_t type, uint8_t request, uint16_t value,
                    uint16_t index, uint16_t length, uint32_t *got, const char **why)
{
    memset(p->dev.buf + DATA_AT, 0, DATA_MAX);
    uint64_t setup = type | (uint64_t)request << 8 | (uint64_t)value << 16 | (uint64_t)index << 32 |
                     (uint64_t)length << 48;
    return xhci_control_transfer(hc, &p->ep0, p->dev.slot, setup, pci_dma_address(p->dev.buf + DATA_AT), length,
                                 got, why);
}

static bool get_descriptor(struct xhci *hc, struct xhci_port *p, uint8_t kind, uint16_t length, uint32_t *got,
                           const char **why)
{
    return control(hc, p, 0x80, REQ_GET_DESCRIPTOR, (uint16_t)(kind << 8), 0, length, got, why);
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

/* Endpoint 0's packet size until the device descriptor says otherwise. */
static unsigned default_mps0(unsigned speed) { return speed == SPEED_HIGH ? 64 : speed >= 4 ? 512 : 8; }

static bool port_reset(struct xhci *hc, unsigned n, uint32_t *sc_out)
{
    uint32_t sc = xhci_port_read(hc, n);
    xhci_port_write(hc, n, (sc & PORT_KEEP) | PORT_RESET);
    int64_t deadline = time_ns() + (int64_t)PORT_RESET_MS * 1000000;
    while (!((sc = xhci_port_read(hc, n)) & PORT_RESET_CHANGE) && time_ns() - deadline < 0)
        task_yield();
    xhci_port_write(hc, n, (sc & PORT_KEEP) | (sc & PORT_CHANGES & ~PORT_CONNECT_CHANGE));
    *sc_out = sc;
    return (sc & PORT_RESET_CHANGE) && (sc & PORT_ENABLED) && (sc & PORT_CONNECTED);
}

static void release(struct xhci *hc, struct xhci_port *p)
{
    if (p->dev.slot)
        xhci_set_device_context(hc, p->dev.slot, 0);
    kfree(p->in_ctx);
    kfree(p->out_ctx);
    kfree(p->ep0.trbs);
    kfree(p->intr.trbs);
    kfree(p->dev.buf);
    memset(p, 0, sizeof *p);
}

/* Queues a transfer on p's interrupt IN endpoint into p->dev.buf's report area. */
static void queue_report(struct xhci *hc, struct xhci_port *p, unsigned len)
{
    p->report_len = (uint16_t)len;
    p->report_trb = xhci_ring_push(&p->intr, pci_dma_address(p->dev.buf + REPORT_AT), len,
                                   TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    xhci_ring_doorbell(hc, p->dev.slot, p->dci);
}

/* ---- enumeration ----------------------------------------------------------------------------------------- */

/* Enable Slot, the device's contexts, rings and buffer, and Address Device with endpoint 0 at the packet size
 * its speed implies. */
static bool address(struct xhci_bus *bus, struct xhci_port *p, const char **why)
{
    struct xhci *hc = bus->hc;
    uint8_t slot = 0;
    if (!xhci_command(hc, 0, TRB_TYPE(TRB_ENABLE_SLOT), &slot, why))
        return false;
    for (unsigned i = 0; i < XHCI_DEVS; i++)
        if (slot == 0 || (dev_at(bus, i) != p && dev_at(bus, i)->dev.slot == slot)) {
            *why = "the controller handed out a slot id that is zero or already in use";
            return false;
        }
    p->dev.slot = slot;
    p->in_ctx = kmalloc_aligned(4096, 4096);
    p->out_ctx = kmalloc_aligned(4096, 4096);
    p->dev.buf = kmalloc_aligned(4096, 4096);
    if (!p->in_ctx || !p->out_ctx || !p->dev.buf || !xhci_ring_init(&p->ep0) || !xhci_ring_init(&p->intr)) {
        *why = "no memory for its contexts";
        return false;
    }
    memset(p->in_ctx, 0, 4096);
    memset(p->out_ctx, 0, 4096);
    xhci_set_device_context(hc, slot, pci_dma_address(p->out_ctx));

    xhci_context(hc, p->in_ctx, 0)[1] = 0x3; /* add the slot and endpoint 0 */
    slot_context(hc, p, 1);
    uint32_t *ep0 = xhci_context(hc, p->in_ctx, 2);
    ep0[1] = 3u << 1 | EP_TYPE_CONTROL << 3 | default_mps0(p->dev.speed) << 16;
    put64(ep0 + 2, pci_dma_address(p->ep0.trbs) | 1);
    ep0[4] = 8;
    return xhci_command(hc, pci_dma_address(p->in_ctx), TRB_TYPE(TRB_ADDRESS_DEVICE) | TRB_SLOT(slot), 0, why);
}

/* The device descriptor's first 8 bytes: a low- or full-speed device whose endpoint 0 is not the 8 bytes it was
 * addressed with has that endpoint's context evaluated again. */
static bool ep0_packet_size(struct xhci *hc, struct xhci_port *p, const char **why)
{
    uint32_t got = 0;
    unsigned speed = p->dev.speed, mps0 = default_mps0(speed);
    if (!get_descriptor(hc, p, USB_DESC_DEVICE, 8, &got, why))
        return false;
    uint8_t dev_mps = p->dev.buf[DATA_AT + 7];
    if (got == 8 && speed <= SPEED_LOW && dev_mps != mps0 && (dev_mps == 16 || dev_mps == 32 || dev_mps == 64)) {
        xhci_context(hc, p->in_ctx, 0)[0] = 0;
        xhci_context(hc, p->in_ctx, 0)[1] = 0x2; /* evaluate endpoint 0 */
        xhci_context(hc, p->in_ctx, 2)[1] = 3u << 1 | EP_TYPE_CONTROL << 3 | (uint32_t)dev_mps << 16;
        if (!xhci_command(hc, pci_dma_address(p->in_ctx), TRB_TYPE(TRB_EVALUATE_CONTEXT) | TRB_SLOT(p->dev.slot), 0,
                          why))
            return false;
    }
    return true;
}

/* The whole device descriptor, then the configuration descriptor set, and in it a boot keyboard's interface
 * (or a hub's, *hub). False with *why, or with *why 0 once a device that is neither has had its line. */
static bool read_descriptors(struct xhci *hc, struct xhci_port *p, const char *path, struct usb_device_info *info,
                             struct usb_kbd_iface *kb, bool *hub, const char **why)
{
    uint32_t got = 0;
    if (!get_descriptor(hc, p, USB_DESC_DEVICE, USB_DEVICE_DESC_LEN, &got, why) ||
        !usb_device_desc_parse(p->dev.buf + DATA_AT, got, info, why))
        return false;
    p->dev.vendor = info->vendor;
    p->dev.product = info->product;
    *hub = info->device_class == USB_CLASS_HUB;
    if (!get_descriptor(hc, p, USB_DESC_CONFIG, USB_CONFIG_DESC_LEN, &got, why))
        return false;
    uint16_t total = usb_config_total_length(p->dev.buf + DATA_AT, got, why);
    if (total == 0)
        return false;
    if (total > DATA_MAX) {
        *why = "its configuration is longer than 3 KiB";
        return false;
    }
    if (!get_descriptor(hc, p, USB_DESC_CONFIG, total, &got, why))
        return false;
    enum usb_config_verdict v = *hub ? usb_config_find_hub(p->dev.buf + DATA_AT, got, kb, why)
                                     : usb_config_find_keyboard(p->dev.buf + DATA_AT, got, kb, why);
    if (v == USB_CONFIG_BAD)
        return false;
    if (v == USB_CONFIG_NO_KEYBOARD && *hub) {
        *why = "the hub has no hub interface with a status-change endpoint";
        return false;
    }
    if (v == USB_CONFIG_NO_KEYBOARD) {
        log_info("usb: port %s: device %04x:%04x (class %02x) is not a boot keyboard: left alone", path,
                 info->vendor, info->product, info->device_class);
        *why = 0;
        return false;
    }
    return true;
}

/* Configure Endpoint with its interrupt IN endpoint (for a hub, after its hub descriptor: the slot context then
 * says Hub, with its port count), and SET_CONFIGURATION. */
static bool configure(struct xhci_bus *bus, struct xhci_port *p, const struct usb_kbd_iface *kb, bool hub,
                      const char **why)
{
    struct xhci *hc = bus->hc;
    if (hub && !usb_hub_describe(&bus->host, &p->dev, why))
        return false;
    p->dci = (uint8_t)((kb->endpoint & 0xF) * 2 + 1);
    memset(p->in_ctx, 0, 4096);
    xhci_context(hc, p->in_ctx, 0)[1] = 1u | 1u << p->dci;
    p->dev.hub = hub; /* the slot context says Hub and its port count from here on */
    slot_context(hc, p, p->dci);
    uint32_t *ep = xhci_context(hc, p->in_ctx, 1 + p->dci);
    ep[0] = interval_exponent(p->dev.speed, kb->interval) << 16;
    ep[1] = 3u << 1 | EP_TYPE_INTERRUPT_IN << 3 | (uint32_t)kb->max_packet << 16;
    put64(ep + 2, pci_dma_address(p->intr.trbs) | 1);
    ep[4] = 8u | (uint32_t)kb->max_packet << 16;
    if (!xhci_command(hc, pci_dma_address(p->in_ctx), TRB_TYPE(TRB_CONFIGURE_ENDPOINT) | TRB_SLOT(p->dev.slot), 0,
                      why))
        return false;
    return control(hc, p, 0x00, REQ_SET_CONFIGURATION, kb->config_value, 0, 0, 0, why);
}

/* Everything after the port reset; false with *why, or with *why NULL when the failure was already logged. */
static bool enumerate(struct xhci_bus *bus, struct xhci_port *p, const char *path, const char **why)
{
    struct xhci *hc = bus->hc;
    const struct pci_device *pci = xhci_pci(hc);
    struct usb_device_info info;
    struct usb_kbd_iface kb;
    bool hub = false;
    char hub_id[32];
    if (!address(bus, p, why) || !ep0_packet_size(hc, p, why) ||
        !read_descriptors(hc, p, path, &info, &kb, &hub, why) || !configure(bus, p, &kb, hub, why))
        return false;
    if (hub) {
        if (!usb_hub_start(&bus->host, &p->dev, report_len(&kb), why))
            return false;
        log_info("usb: xHCI %04x:%04x: port %s%s: hub %04x:%04x, %u ports, slot %u", pci->vendor, pci->device,
                 path, behind(p, hub_id, sizeof hub_id), info.vendor, info.product, p->dev.hub_ports, p->dev.slot);
        return true;
    }
    if (!control(hc, p, 0x21, REQ_SET_PROTOCOL, 0, kb.interface, 0, 0, why))
        return false;
    const char *idle_why;
    (void)control(hc, p, 0x21, REQ_SET_IDLE, 0, kb.interface, 0, 0, &idle_why); /* optional: some stall it */

    usb_kbd_init(&p->kbd);
    p->keyboard = true;
    queue_report(hc, p, report_len(&kb));
    log_info("usb: xHCI %04x:%04x: port %s%s: keyboard %04x:%04x (boot protocol), slot %u", pci->vendor,
             pci->device, path, behind(p, hub_id, sizeof hub_id), info.vendor, info.product, p->dev.slot);
    return true;
}

/* p's place (root_port, route, tier, speed, tt_*) is set: slot, address, descriptors, and a keyboard or a hub
 * configured. False when it was given up on (logged); its slot is then disabled and p released. */
static bool dev_enumerate(struct xhci_bus *bus, struct xhci_port *p)
{
    char path[USB_HUB_PATH_MAX];
    const char *why = "";
    dev_path(p, path);
    if (enumerate(bus, p, path, &why))
        return true;
    if (why)
        log_warn("usb: port %s: %s: left alone", path, why);
    if (p->dev.slot) {
        const char *ignored;
        xhci_command(bus->hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(p->dev.slot), 0, &ignored);
    }
    release(bus->hc, p);
    return false;
}

/* Depth-first, children before their hub; depth is bounded by the route string's tiers. */
static void detach_tree(struct xhci_bus *bus, struct xhci_port *p, unsigned depth)
{
    if (p->dev.hub_ports && depth <= USB_HUB_MAX_TIERS)
        for (unsigned i = 0; i < XHCI_BEHIND_HUBS; i++)
            if (bus->behind[i].used && bus->behind[i].dev.parent == &p->dev)
                detach_tree(bus, &bus->behind[i], depth + 1);
    if (p->dev.slot) {
        char path[USB_HUB_PATH_MAX];
        const char *why = "";
        uint8_t slot = p->dev.slot;
        dev_path(p, path);
        bool ok = xhci_command(bus->hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(slot), 0, &why);
        log_info("usb: port %s: %s unplugged, slot %u %s", path,
                 p->keyboard ? "keyboard" : p->dev.hub_ports ? "hub" : "device", slot, ok ? "disabled" : why);
    }
    release(bus->hc, p);
}

/* ---- root ports, transfers, key repeat (from the task) --------------------------------------------------- */

static void root_port_attach(struct xhci_bus *bus, unsigned n)
{
    struct xhci_port *p = &bus->ports[n];
    uint32_t sc;
    if (!port_reset(bus->hc, n, &sc)) {
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
    p->dev.root_port = (uint8_t)n;
    p->dev.speed = (uint8_t)speed;
    if (!dev_enumerate(bus, p))
        p->failed = true;
}

void xhci_root_port_look(struct xhci_bus *bus, unsigned n)
{
    uint32_t sc = xhci_port_read(bus->hc, n);
    xhci_port_write(bus->hc, n, (sc & PORT_KEEP) | (sc & PORT_CHANGES)); /* acknowledge the changes */
    struct xhci_port *p = &bus->ports[n];
    bool was = p->dev.slot || p->failed;
    if (was && (!(sc & PORT_CONNECTED) || (sc & PORT_CONNECT_CHANGE)))
        detach_tree(bus, p, 0); /* gone, or gone and back between two looks */
    if ((sc & PORT_CONNECTED) && !p->dev.slot && !p->failed)
        root_port_attach(bus, n);
}

void xhci_dev_transfer(void *arg, const struct xhci_event *ev)
{
    struct xhci_bus *bus = arg;
    for (unsigned i = 0; i < XHCI_DEVS; i++) {
        struct xhci_port *p = dev_at(bus, i);
        if (!(p->keyboard || (p->dev.hub && !p->dev.hub_stopped)) || p->dev.slot != ev->slot ||
            p->dci != ev->endpoint)
            continue;
        char path[USB_HUB_PATH_MAX];
        dev_path(p, path);
        if (ev->trb != p->report_trb) {
            if (xhci_bad_event(bus->hc))
                log_warn("usb: port %s: a transfer event for a TRB never queued: ignored", path);
            return;
        }
        unsigned len = p->report_len;
        bool ok = ev->code == CC_SUCCESS || ev->code == CC_SHORT_PACKET;
        if (p->dev.hub) {
            /* a residual past what was asked for names nothing */
            bool counted = ev->residual <= len;
            struct usb_report r = { ok, ev->code, counted ? p->dev.buf + REPORT_AT : 0,
                                    counted ? len - ev->residual : 0, len };
            usb_hub_report(&bus->host, &p->dev, &r);
            return;
        }
        if (!ok) {
            log_warn("usb: port %s: keyboard endpoint stopped (completion code %u)", path, ev->code);
            p->keyboard = false;
            return;
        }
        if (ev->residual <= len) {
            char out[USB_KBD_OUT_MAX];
            size_t k = usb_kbd_report(&p->kbd, p->dev.buf + REPORT_AT, len - ev->residual, time_ns(), out);
            keys_out(out, (unsigned)k);
        }
        queue_report(bus->hc, p, len);
        return;
    }
}

int64_t xhci_keyboards_tick(struct xhci_bus *bus, int64_t now, int64_t next)
{
    for (unsigned i = 0; i < XHCI_DEVS; i++) { /* keyboards on root ports and behind hubs */
        char out[USB_KBD_OUT_MAX];
        struct xhci_port *d = dev_at(bus, i);
        if (d->keyboard) {
            size_t k = usb_kbd_tick(&d->kbd, now, out);
            keys_out(out, (unsigned)k);
            int64_t due = usb_kbd_deadline(&d->kbd);
            if (due - next < 0)
                next = due;
        }
    }
    return next;
}

/* ---- the USB core's operations (kernel/drivers/usb/usb_host.h) ------------------------------------------- */

static bool host_control(struct usb_host *host, struct usb_device *d, uint8_t type, uint8_t request,
                         uint16_t value, uint16_t index, uint16_t length, uint32_t *got, const char **why)
{
    return control(bus_of(host)->hc, port_of(d), type, request, value, index, length, got, why);
}

static void host_queue_report(struct usb_host *host, struct usb_device *d, unsigned len)
{
    queue_report(bus_of(host)->hc, port_of(d), len);
}

static struct usb_device *host_device_at(struct usb_host *host, unsigned i)
{
    return i < XHCI_DEVS ? &dev_at(bus_of(host), i)->dev : 0;
}

static struct usb_device *host_spare(struct usb_host *host)
{
    struct xhci_bus *bus = bus_of(host);
    for (unsigned i = 0; i < XHCI_BEHIND_HUBS; i++)
        if (!bus->behind[i].used)
            return &bus->behind[i].dev;
    return 0;
}

static bool host_enumerate(struct usb_host *host, struct usb_device *d)
{
    struct xhci_port *p = port_of(d);
    p->used = true;
    return dev_enumerate(bus_of(host), p); /* p released (used false again) when it fails */
}

static void host_detach(struct usb_host *host, struct usb_device *d) { detach_tree(bus_of(host), port_of(d), 0); }

static const struct usb_host_ops xhci_host_ops = {
    .control = host_control,
    .queue_report = host_queue_report,
    .device_at = host_device_at,
    .spare = host_spare,
    .enumerate = host_enumerate,
    .detach = host_detach,
};

void xhci_bus_init(struct xhci_bus *bus, struct xhci *hc)
{
    memset(bus, 0, sizeof *bus);
    bus->host.ops = &xhci_host_ops;
    bus->hc = hc;
}
