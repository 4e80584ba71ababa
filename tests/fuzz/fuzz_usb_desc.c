/* tests/fuzz/fuzz_usb_desc.c: what a USB device and an xHCI controller hand back, as arbitrary bytes
 * (kernel/drivers/usb/usb_desc.c, kernel/drivers/usb/usb_hub_desc.c, kernel/drivers/usb/xhci_trb.c,
 * kernel/drivers/usb/usb_kbd.c).
 * The input, copied into a buffer of exactly its size so AddressSanitizer sees any read past it, is taken as a
 * configuration descriptor set, a device descriptor, a hub descriptor, a hub port status and status-change
 * report, a route string's parts, a run of event TRBs and a run of boot reports. Whatever the bytes: a hub is
 * only taken with 1..15 ports and a bLength covering them within the bytes; a change report names only ports
 * the hub has whose bits are set; a route string never holds more than five tiers; a keyboard is only
 * reported with an interrupt IN endpoint 1..15, a packet size 1..2047 and a non-zero interval found inside the
 * bytes; every event handed back has its slot, endpoint and port in range; a report never yields more
 * characters than USB_KBD_OUT_MAX, and the repeat deadline only ever moves forward. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/drivers/usb/usb_desc.h"
#include "kernel/drivers/usb/usb_hub_desc.h"
#include "kernel/drivers/usb/usb_kbd.h"
#include "kernel/drivers/usb/xhci_trb.h"

static void check_config(const uint8_t *buf, size_t len)
{
    struct usb_kbd_iface kb = { 0 };
    const char *why = 0;
    enum usb_config_verdict v = usb_config_find_keyboard(buf, len, &kb, &why);
    if (v == USB_CONFIG_KEYBOARD) {
        CHECK(kb.endpoint & 0x80);
        CHECK((kb.endpoint & 0x0F) >= 1 && !(kb.endpoint & 0x70));
        CHECK(kb.max_packet >= 1 && kb.max_packet <= 0x7FF);
        CHECK(kb.interval >= 1);
        uint16_t total = usb_config_total_length(buf, len, &why);
        CHECK(total >= USB_CONFIG_DESC_LEN && total <= len);
        /* the endpoint descriptor it came from is in the bytes */
        bool seen = false;
        for (size_t i = USB_CONFIG_DESC_LEN; i + 7 <= total && !seen; i++)
            seen = buf[i + 1] == USB_DESC_ENDPOINT && buf[i + 2] == kb.endpoint && buf[i + 6] == kb.interval;
        CHECK(seen);
    } else if (v == USB_CONFIG_BAD) {
        CHECK(why != 0);
        CHECK(kb.endpoint == 0);
    } else {
        CHECK(v == USB_CONFIG_NO_KEYBOARD);
        CHECK(kb.endpoint == 0);
    }
}

static void check_device(const uint8_t *buf, size_t len)
{
    struct usb_device_info info = { 0 };
    const char *why = 0;
    if (usb_device_desc_parse(buf, len, &info, &why)) {
        CHECK(len >= USB_DEVICE_DESC_LEN && buf[1] == USB_DESC_DEVICE);
        CHECK(info.configurations > 0);
    } else {
        CHECK(why != 0);
    }
}

/* The same bytes as a hub descriptor, a port status and a status-change report; the first byte also picks a
 * route string's parent tier and port. */
static void check_hub(const uint8_t *buf, size_t len)
{
    struct usb_hub_info h = { 0 };
    const char *why = 0;
    if (usb_hub_desc_parse(buf, len, &h, &why)) {
        CHECK(h.ports >= 1 && h.ports <= USB_HUB_MAX_PORTS && buf[0] <= len && buf[1] == USB_DESC_HUB);
        CHECK(buf[0] >= 7 + (h.ports + 1 + 7) / 8);
    } else {
        CHECK(why != 0 && h.ports == 0);
    }
    struct usb_hub_port st;
    why = 0;
    if (usb_hub_port_status(buf, len, &st, &why))
        CHECK(len >= 4 && st.speed >= 1 && st.speed <= 3 && !(st.changes & ~USB_HUB_C_DEFINED));
    else
        CHECK(why != 0 && len < 4);
    unsigned ports = len ? buf[0] : 0;
    uint16_t bits = usb_hub_change_bits(buf, len, ports);
    CHECK(!(bits & 1));
    CHECK(ports >= USB_HUB_MAX_PORTS || bits >> (ports + 1) == 0);
    for (unsigned n = 1; n <= USB_HUB_MAX_PORTS; n++)
        CHECK(!(bits & (1u << n)) || (n / 8 < len && (buf[n / 8] >> (n % 8) & 1)));
    if (len >= 4) {
        uint32_t parent = (uint32_t)buf[1] | (uint32_t)buf[2] << 8 | (uint32_t)buf[3] << 16, route = 0xDEAD;
        unsigned tier = buf[0] & 7, port = buf[0] >> 3;
        if (usb_hub_route(parent, tier, port, &route)) {
            CHECK(tier < USB_HUB_MAX_TIERS && port >= 1 && port <= 15 && route < (1u << 20));
            CHECK((route >> (4 * tier)) == port);
            char path[USB_HUB_PATH_MAX + 1];
            path[USB_HUB_PATH_MAX] = 0x5A;
            usb_hub_path(buf[1] % 100, route, tier + 1, path);
            CHECK(path[USB_HUB_PATH_MAX] == 0x5A && strlen(path) < USB_HUB_PATH_MAX);
        } else {
            CHECK(route == 0xDEAD && (tier >= USB_HUB_MAX_TIERS || port == 0 || port > 15));
        }
    }
}

static void check_events(const uint8_t *data, size_t size)
{
    unsigned slots = data[0], ports = data[1] % 33;
    for (size_t at = 2; at + sizeof(struct xhci_trb) <= size; at += sizeof(struct xhci_trb)) {
        struct xhci_trb t;
        memcpy(&t, data + at, sizeof t);
        struct xhci_event e = { .slot = 0xEE };
        const char *why = 0;
        bool cycle = at & 16;
        enum xhci_event_kind k = xhci_event_judge(&t, cycle, slots, ports, &e, &why);
        if (((t.control & 1) != 0) != cycle) {
            CHECK(k == XHCI_EVENT_NONE && e.slot == 0xEE);
            continue;
        }
        unsigned type = (t.control >> 10) & 0x3F;
        switch (k) {
        case XHCI_EVENT_TRANSFER:
            CHECK(type == TRB_EV_TRANSFER && e.slot >= 1 && e.slot <= slots && e.endpoint >= 1 && e.endpoint <= 31);
            CHECK(!(e.trb & 0xF) && e.code != 0);
            break;
        case XHCI_EVENT_COMMAND:
            CHECK(type == TRB_EV_COMMAND && e.slot <= slots && !(e.trb & 0xF) && e.code != 0);
            break;
        case XHCI_EVENT_PORT:
            CHECK(type == TRB_EV_PORT && e.port >= 1 && e.port <= ports);
            break;
        case XHCI_EVENT_OTHER:
            CHECK(type >= TRB_EV_BANDWIDTH && type <= TRB_EV_MFINDEX && type != TRB_EV_PORT);
            break;
        default:
            CHECK(k == XHCI_EVENT_BAD && why != 0 && e.slot == 0xEE);
        }
    }
}

static void check_reports(const uint8_t *data, size_t size)
{
    struct usb_kbd k;
    usb_kbd_init(&k);
    int64_t now = 0;
    for (size_t at = 0; at + 9 <= size; at += 9) {
        now += (int64_t)data[at] * 4000000; /* 0..1 s between reports */
        char out[USB_KBD_OUT_MAX + 1];
        out[USB_KBD_OUT_MAX] = 0x5A;
        size_t n = usb_kbd_report(&k, data + at + 1, 8, now, out);
        CHECK(n <= USB_KBD_OUT_MAX && out[USB_KBD_OUT_MAX] == 0x5A);
        int64_t before = usb_kbd_deadline(&k);
        n = usb_kbd_tick(&k, now + (int64_t)data[at] * 3000000, out);
        CHECK(n <= 1);
        CHECK(n == 0 || usb_kbd_deadline(&k) > before);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    check_config(copy, size);
    check_device(copy, size);
    check_hub(copy, size);
    if (size >= 2)
        check_events(copy, size);
    check_reports(copy, size);
    free(copy);
    return 0;
}
