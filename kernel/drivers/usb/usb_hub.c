/* kernel/drivers/usb/usb_hub.c: USB 2.0 hubs between a root port and a keyboard (docs/usb.md). A hub is
 * enumerated like any device by its host controller's driver (kernel/drivers/usb/xhci_dev.c), which calls here
 * for its hub descriptor (before Configure Endpoint, whose slot context needs the port count) and to start it:
 * every port powered, one transfer kept queued on its status-change endpoint. That endpoint's reports only note
 * the ports they name (they arrive while the event ring is drained, where no control transfer may start); the
 * controller's task then looks at each noted port here: GET_PORT_STATUS, its change bits cleared, a device gone
 * detached with everything behind it, one come reset (SET_PORT_FEATURE(PORT_RESET), C_PORT_RESET waited for) and
 * enumerated with its route string, speed and transaction translator. The controller is reached only through
 * its operations (kernel/drivers/usb/usb_host.h). Everything the hub says is judged by
 * kernel/drivers/usb/usb_hub_desc.c first; every wait is bounded. */
#include "kernel/drivers/usb/usb_hub.h"

#include "hal/cpu.h"
#include "kernel/drivers/usb/usb_hub_desc.h"
#include "kernel/log.h"
#include "kernel/task.h"

#define REQ_GET_STATUS 0
#define REQ_CLEAR_FEATURE 1
#define REQ_SET_FEATURE 3
#define REQ_GET_DESCRIPTOR 6
#define RT_HUB_IN 0xA0   /* class request to the hub, device to host */
#define RT_PORT_IN 0xA3  /* class request to a port, device to host */
#define RT_PORT_OUT 0x23 /* class request to a port, host to device */
#define FEAT_PORT_RESET 4
#define FEAT_PORT_POWER 8
#define FEAT_C_PORT_CONNECTION 16 /* C_PORT_CONNECTION .. C_PORT_RESET are 16..20, wPortChange bits 0..4 */
#define HUB_DESC_MAX 32
#define RESET_MS 500
#define RESET_POLL_MS 10
#define RECOVERY_MS 10     /* after a reset, before the device must answer (USB 2.0 TRSTRCY) */
#define LOOK_PASSES 8      /* passes over noted ports per task wake: a hub chain's new hubs, each a pass */
#define SPEED_HIGH 3

static bool control(struct usb_host *host, struct usb_device *d, uint8_t type, uint8_t request, uint16_t value,
                    uint16_t index, uint16_t length, uint32_t *got, const char **why)
{
    return host->ops->control(host, d, type, request, value, index, length, got, why);
}

/* "1.2.3": the root port and hub ports on the way to d, into out[USB_HUB_PATH_MAX]. */
static void path_of(const struct usb_device *d, char *out) { usb_hub_path(d->root_port, d->route, d->tier, out); }

bool usb_hub_describe(struct usb_host *host, struct usb_device *p, const char **why)
{
    uint32_t got = 0;
    struct usb_hub_info info;
    if (!control(host, p, RT_HUB_IN, REQ_GET_DESCRIPTOR, USB_DESC_HUB << 8, 0, HUB_DESC_MAX, &got, why) ||
        !usb_hub_desc_parse(p->buf, got, &info, why))
        return false;
    p->hub_ports = info.ports;
    p->hub_think = p->speed == SPEED_HIGH ? info.think_time : 0;
    p->hub_power_ms = info.power_on_ms;
    return true;
}

bool usb_hub_start(struct usb_host *host, struct usb_device *p, unsigned report_len, const char **why)
{
    for (unsigned n = 1; n <= p->hub_ports; n++)
        if (!control(host, p, RT_PORT_OUT, REQ_SET_FEATURE, FEAT_PORT_POWER, (uint16_t)n, 0, 0, why))
            return false;
    task_sleep_ms(p->hub_power_ms + RECOVERY_MS);
    p->hub_changed = (uint16_t)(((1u << p->hub_ports) - 1) << 1); /* every port looked at once */
    host->ops->queue_report(host, p, report_len);
    return true;
}

void usb_hub_report(struct usb_host *host, struct usb_device *p, const struct usb_report *r)
{
    if (!r->ok) {
        char path[USB_HUB_PATH_MAX];
        path_of(p, path);
        log_warn("usb: port %s: hub status-change endpoint stopped (completion code %u): its ports are no "
                 "longer watched", path, r->code);
        p->hub_stopped = true;
        return;
    }
    if (r->data)
        p->hub_changed |= usb_hub_change_bits(r->data, r->len, p->hub_ports);
    host->ops->queue_report(host, p, r->asked);
}

static bool port_status(struct usb_host *host, struct usb_device *hub, unsigned n, struct usb_hub_port *st,
                        const char **why)
{
    uint32_t got = 0;
    return control(host, hub, RT_PORT_IN, REQ_GET_STATUS, 0, (uint16_t)n, 4, &got, why) &&
           usb_hub_port_status(hub->buf, got, st, why);
}

/* Every change bit the port reports, acknowledged (CLEAR_FEATURE(C_PORT_*)). */
static bool clear_changes(struct usb_host *host, struct usb_device *hub, unsigned n, uint16_t changes,
                          const char **why)
{
    for (unsigned b = 0; b < 5; b++)
        if ((changes & (1u << b)) &&
            !control(host, hub, RT_PORT_OUT, REQ_CLEAR_FEATURE, (uint16_t)(FEAT_C_PORT_CONNECTION + b),
                     (uint16_t)n, 0, 0, why))
            return false;
    return true;
}

static bool port_reset(struct usb_host *host, struct usb_device *hub, unsigned n, struct usb_hub_port *st,
                       const char **why)
{
    if (!control(host, hub, RT_PORT_OUT, REQ_SET_FEATURE, FEAT_PORT_RESET, (uint16_t)n, 0, 0, why))
        return false;
    int64_t deadline = time_ns() + (int64_t)RESET_MS * 1000000;
    for (;;) {
        if (!port_status(host, hub, n, st, why))
            return false;
        if (st->changes & USB_HUB_C_RESET)
            break;
        if (time_ns() - deadline > 0) {
            *why = "the port did not finish its reset";
            return false;
        }
        task_sleep_ms(RESET_POLL_MS);
    }
    if (!clear_changes(host, hub, n, st->changes & USB_HUB_C_RESET, why))
        return false;
    if (!st->connected || !st->enabled) {
        *why = "the port did not come out of reset enabled";
        return false;
    }
    task_sleep_ms(RECOVERY_MS);
    return true;
}

static struct usb_device *child(struct usb_host *host, struct usb_device *hub, unsigned n)
{
    struct usb_device *d;
    for (unsigned i = 0; (d = host->ops->device_at(host, i)); i++)
        if (d->parent == hub && d->parent_port == n) /* a free record's parent is 0 */
            return d;
    return 0;
}

/* A device come on port n: reset, placed, enumerated. False with *why (or *why NULL, already logged). */
static bool attach(struct usb_host *host, struct usb_device *hub, unsigned n, const char **why)
{
    uint32_t route;
    if (!usb_hub_route(hub->route, hub->tier, n, &route)) {
        *why = "more than 5 hubs deep: the route string cannot name it";
        return false;
    }
    struct usb_device *p = host->ops->spare(host);
    if (!p) {
        *why = "no room for another device behind hubs";
        return false;
    }
    struct usb_hub_port st;
    if (!port_reset(host, hub, n, &st, why))
        return false;
    p->parent = hub;
    p->parent_port = (uint8_t)n;
    p->root_port = hub->root_port;
    p->tier = (uint8_t)(hub->tier + 1);
    p->route = route;
    p->speed = st.speed;
    struct usb_hub_tt tt = usb_hub_tt_for(st.speed, hub->speed, hub->slot, n,
                                          (struct usb_hub_tt){ hub->tt_slot, hub->tt_port });
    p->tt_slot = tt.slot;
    p->tt_port = tt.port;
    *why = 0;
    return host->ops->enumerate(host, p); /* logs its own failure, and frees p */
}

static void look(struct usb_host *host, struct usb_device *hub, unsigned n)
{
    char path[USB_HUB_PATH_MAX];
    const char *why = "";
    struct usb_hub_port st;
    uint16_t bit = (uint16_t)(1u << n);
    if (!port_status(host, hub, n, &st, &why) || !clear_changes(host, hub, n, st.changes, &why)) {
        path_of(hub, path);
        log_warn("usb: port %s: hub port %u: %s", path, n, why);
        return;
    }
    struct usb_device *c = child(host, hub, n);
    if ((c || (hub->hub_failed & bit)) && (!st.connected || (st.changes & USB_HUB_C_CONNECTION))) {
        if (c)
            host->ops->detach(host, c); /* gone, or gone and back between two looks */
        c = 0;
        hub->hub_failed &= (uint16_t)~bit;
    }
    if (!st.connected || c || (hub->hub_failed & bit))
        return;
    if (!attach(host, hub, n, &why)) {
        hub->hub_failed |= bit;
        if (why) {
            path_of(hub, path);
            log_warn("usb: port %s.%u: %s: left alone", path, n, why);
        }
    }
}

void usb_hubs_look(struct usb_host *host)
{
    for (unsigned pass = 0; pass < LOOK_PASSES; pass++) {
        bool any = false;
        struct usb_device *hub;
        for (unsigned i = 0; (hub = host->ops->device_at(host, i)); i++) {
            /* the ports noted now; those a report notes meanwhile wait for the next pass */
            uint16_t todo = hub->hub ? hub->hub_changed : 0;
            hub->hub_changed = 0;
            any |= todo != 0;
            for (unsigned n = 1; n <= USB_HUB_MAX_PORTS; n++)
                if ((todo & (1u << n)) && hub->hub && n <= hub->hub_ports)
                    look(host, hub, n);
        }
        if (!any)
            return;
    }
}
