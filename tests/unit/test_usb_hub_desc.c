/* tests/unit/test_usb_hub_desc.c: what a USB hub hands back, judged before the xHCI driver's hub code uses it
 * (kernel/drivers/usb/usb_hub_desc.c): QEMU's hub descriptor is read right; a short one, one whose bLength lies, or
 * one with 0 or 16 ports is refused with a reason; a port status decodes to its speed and changes; a
 * status-change bitmap names only ports the hub has; route strings compose tier by tier up to five hubs; and a
 * low- or full-speed device gets the nearest high-speed hub's transaction translator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/drivers/usb/usb_hub_desc.h"
#include "unit_main.h"

/* QEMU's usb-hub as it answers: 8 ports, so a two-byte DeviceRemovable, and a PortPwrCtrlMask sized by the
 * ports alone (one byte); bPwrOn2PwrGood 10 here (20 ms). */
static const uint8_t hub_desc[10] = { 10, 0x29, 8, 0x0A, 0x00, 10, 0, 0x00, 0x00, 0xFF };

static void test_hub_descriptor_read(void **state)
{
    (void)state;
    struct {
        const char *what;
        uint8_t d[12];
        size_t len;
        uint8_t ports, power_on_ms, think_time;
    } cases[] = {
        { "QEMU's", { 10, 0x29, 8, 0x0A, 0x00, 10, 0, 0x00, 0x00, 0xFF }, 10, 8, 20, 0 },
        { "15 ports, no PortPwrCtrlMask at all", { 9, 0x29, 15, 0x60, 0, 200, 0, 0, 0 }, 9, 15, 254, 3 },
    };
    memcpy(cases[0].d, hub_desc, sizeof hub_desc);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct usb_hub_info h;
        const char *why = 0;
        if (!usb_hub_desc_parse(cases[i].d, cases[i].len, &h, &why))
            fail_msg("%s: refused (%s)", cases[i].what, why);
        if (h.ports != cases[i].ports || h.power_on_ms != cases[i].power_on_ms
            || h.think_time != cases[i].think_time)
            fail_msg("%s: %u ports, %u ms, think time %u; not %u, %u, %u", cases[i].what, h.ports, h.power_on_ms,
                     h.think_time, cases[i].ports, cases[i].power_on_ms, cases[i].think_time);
    }
}

static void test_bad_hub_descriptors_refused(void **state)
{
    (void)state;
    struct usb_hub_info h = { 0 };
    /* Each QEMU's descriptor (or nothing) with a byte or two changed, received up to len. */
    struct {
        const char *what;
        bool zeros; /* built on zeros rather than on QEMU's descriptor */
        size_t len;
        uint8_t at[3], value[3];
        unsigned changes;
    } cases[] = {
        { "short", false, 2, { 0 }, { 0 }, 0 },
        { "bLength says 10, 9 came", false, 9, { 0 }, { 0 }, 0 },
        { "wrong type (the USB 3 hub's)", false, 11, { 1 }, { 0x2A }, 1 },
        { "no ports", false, 11, { 2 }, { 0 }, 1 },
        { "16 ports: a route string cannot name the 16th", true, 11, { 0, 1, 2 }, { 11, 0x29, 16 }, 3 },
        { "bLength past the bytes received", false, 11, { 0 }, { 12 }, 1 },
        { "bLength too short for 8 ports' DeviceRemovable: 9 are due", false, 11, { 0 }, { 8 }, 1 },
        { "13 bytes announced, 11 received", false, 11, { 0, 2 }, { 13, 8 }, 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t d[12] = { 0 };
        if (!cases[i].zeros)
            memcpy(d, hub_desc, 10);
        for (unsigned c = 0; c < cases[i].changes; c++)
            d[cases[i].at[c]] = cases[i].value[c];
        const char *why = 0;
        if (usb_hub_desc_parse(d, cases[i].len, &h, &why))
            fail_msg("%s: accepted", cases[i].what);
        if (!why)
            fail_msg("%s: refused without a reason", cases[i].what);
        if (h.ports != 0)
            fail_msg("%s: %u ports written on refusal", cases[i].what, h.ports); /* nothing written on refusal */
    }
    uint8_t d[12] = { 0 };
    const char *why = 0;
    memcpy(d, hub_desc, 10);
    d[0] = 8; d[2] = 7; /* 7 ports fit a one-byte DeviceRemovable: 8 bytes do */
    assert_true(usb_hub_desc_parse(d, 11, &h, &why));
    assert_int_equal(h.ports, 7);
}

static void test_port_status_decoded(void **state)
{
    (void)state;
    struct usb_hub_port p;
    const char *why = 0;
    const uint8_t fs[4] = { 0x03, 0x01, 0x11, 0x00 }; /* connected, enabled, powered; C_CONNECTION, C_RESET */
    assert_true(usb_hub_port_status(fs, 4, &p, &why));
    assert_true(p.connected && p.enabled && p.powered && !p.reset && !p.over_current);
    assert_int_equal(p.speed, 1);
    assert_int_equal(p.changes, USB_HUB_C_CONNECTION | USB_HUB_C_RESET);
    const uint8_t ls[4] = { 0x11, 0x03, 0xFF, 0xE0 }; /* low speed, resetting; undefined change bits */
    assert_true(usb_hub_port_status(ls, 4, &p, &why));
    assert_true(p.connected && p.reset && !p.enabled);
    assert_int_equal(p.speed, 2);
    assert_int_equal(p.changes, 0x1F);
    const uint8_t hs[4] = { 0x01, 0x05, 0, 0 };
    assert_true(usb_hub_port_status(hs, 4, &p, &why));
    assert_int_equal(p.speed, 3);
    assert_int_equal(p.changes, 0);
    why = 0;
    assert_false(usb_hub_port_status(fs, 3, &p, &why));
    assert_non_null(why);
}

static void test_change_bitmap_names_only_the_hubs_ports(void **state)
{
    (void)state;
    const uint8_t one[1] = { 0x05 }; /* the hub itself (bit 0) and port 2 */
    assert_int_equal(usb_hub_change_bits(one, 1, 8), 1u << 2);
    const uint8_t high[2] = { 0x00, 0x03 }; /* ports 8 and 9 */
    assert_int_equal(usb_hub_change_bits(high, 2, 8), 1u << 8);
    assert_int_equal(usb_hub_change_bits(high, 2, 9), 1u << 8 | 1u << 9);
    assert_int_equal(usb_hub_change_bits(high, 1, 15), 0); /* the second byte was never received */
    const uint8_t all[4] = { 0xFF, 0xFF, 0xFF, 0xFF };
    assert_int_equal(usb_hub_change_bits(all, 4, 15), 0xFFFE);
    assert_int_equal(usb_hub_change_bits(all, 4, 200), 0xFFFE);
    assert_int_equal(usb_hub_change_bits(all, 0, 8), 0);
}

static void test_route_strings_compose_by_tier(void **state)
{
    (void)state;
    uint32_t r = 0, hub1, hub2;
    assert_true(usb_hub_route(0, 0, 1, &hub1)); /* a hub's port 1, the hub on a root port */
    assert_int_equal(hub1, 0x1);
    assert_true(usb_hub_route(hub1, 1, 2, &hub2));
    assert_int_equal(hub2, 0x21);
    assert_true(usb_hub_route(hub2, 2, 15, &r));
    assert_int_equal(r, 0xF21);
    assert_true(usb_hub_route(0xF21, 3, 3, &r));
    assert_true(usb_hub_route(r, 4, 4, &r));
    assert_int_equal(r, 0x43F21); /* five tiers: all 20 bits */
    assert_false(usb_hub_route(r, 5, 1, &r)); /* a sixth is past the route string */
    assert_int_equal(r, 0x43F21);
    assert_false(usb_hub_route(hub1, 1, 0, &r));
    assert_false(usb_hub_route(hub1, 1, 16, &r));
    assert_true(usb_hub_route(0xFFFFF, 1, 2, &r)); /* bits past the parent's tiers are not carried */
    assert_int_equal(r, 0x2F);
    char path[USB_HUB_PATH_MAX];
    usb_hub_path(1, 0x21, 2, path);
    assert_string_equal(path, "1.1.2");
    usb_hub_path(32, 0xFFFFF, 5, path);
    assert_string_equal(path, "32.15.15.15.15.15");
    usb_hub_path(5, 0, 0, path);
    assert_string_equal(path, "5");
}

static void test_transaction_translator_chosen(void **state)
{
    (void)state;
    const struct usb_hub_tt none = { 0, 0 }, up = { 4, 7 };
    struct usb_hub_tt t = usb_hub_tt_for(1, 3, 9, 2, none); /* full speed behind a high-speed hub */
    assert_int_equal(t.slot, 9);
    assert_int_equal(t.port, 2);
    t = usb_hub_tt_for(2, 3, 9, 5, up); /* low speed: the nearest high-speed hub, not one further up */
    assert_int_equal(t.slot, 9);
    assert_int_equal(t.port, 5);
    t = usb_hub_tt_for(2, 1, 9, 5, up); /* behind a full-speed hub: the translator that hub goes through */
    assert_int_equal(t.slot, 4);
    assert_int_equal(t.port, 7);
    t = usb_hub_tt_for(1, 1, 9, 5, none); /* QEMU's: full speed behind a full-speed hub on a root port */
    assert_int_equal(t.slot, 0);
    assert_int_equal(t.port, 0);
    t = usb_hub_tt_for(3, 3, 9, 5, up); /* high speed needs none */
    assert_int_equal(t.slot, 0);
    assert_int_equal(t.port, 0);
}

UNIT_MAIN(NULL, NULL,
          test_hub_descriptor_read, test_bad_hub_descriptors_refused, test_port_status_decoded,
          test_change_bitmap_names_only_the_hubs_ports, test_route_strings_compose_by_tier,
          test_transaction_translator_chosen)
