/* tests/unit/test_usb_desc.c: the descriptors a USB device hands back, judged before the xHCI driver uses them
 * (kernel/drivers/usb/usb_desc.c): a real keyboard's device and configuration descriptors are read right, and every
 * bad length, type, endpoint count or overrun -- in what the device announces or in what it actually sent --
 * is refused with a reason, never read past. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/drivers/usb/usb_desc.h"
#include "unit_main.h"

/* QEMU's usb-kbd, as it answers GET_DESCRIPTOR. */
static const uint8_t device_desc[18] = {
    18, 1, 0x00, 0x02, 0, 0, 0, 8, 0x27, 0x06, 0x01, 0x00, 0x00, 0x00, 1, 4, 11, 1,
};
static const uint8_t kbd_config[34] = {
    9, 2, 34, 0, 1, 1, 7, 0xA0, 50,              /* configuration 1, one interface */
    9, 4, 0, 0, 1, 3, 1, 1, 0,                   /* interface 0: HID, boot, keyboard, one endpoint */
    9, 0x21, 0x11, 0x01, 0, 1, 0x22, 63, 0,      /* HID descriptor */
    7, 5, 0x81, 0x03, 8, 0, 10,                  /* endpoint 1 IN, interrupt, 8 bytes, every 10 ms */
};

static void test_device_descriptor_read(void **state)
{
    (void)state;
    struct usb_device_info info;
    const char *why = 0;
    assert_true(usb_device_desc_parse(device_desc, sizeof device_desc, &info, &why));
    assert_int_equal(info.vendor, 0x0627);
    assert_int_equal(info.product, 0x0001);
    assert_int_equal(info.max_packet0, 8);
    assert_int_equal(info.device_class, 0);
}

static void test_bad_device_descriptors_refused(void **state)
{
    (void)state;
    struct usb_device_info info;
    const char *why = 0;
    assert_false(usb_device_desc_parse(device_desc, 17, &info, &why)); /* came back short */
    assert_non_null(why);
    /* The good descriptor with one byte changed: bLength, bDescriptorType, bMaxPacketSize0 (no such endpoint
     * 0 packet size), bNumConfigurations. */
    static const struct {
        size_t at;
        uint8_t value;
    } changes[] = { { 0, 17 }, { 1, 2 }, { 7, 7 }, { 17, 0 } };
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
        uint8_t d[18];
        memcpy(d, device_desc, 18);
        d[changes[i].at] = changes[i].value;
        if (usb_device_desc_parse(d, 18, &info, &why))
            fail_msg("byte %zu = %u accepted", changes[i].at, changes[i].value);
    }
}

static void test_keyboard_found(void **state)
{
    (void)state;
    struct usb_kbd_iface kb;
    const char *why = 0;
    assert_int_equal(usb_config_total_length(kbd_config, 9, &why), 34);
    assert_int_equal(usb_config_find_keyboard(kbd_config, sizeof kbd_config, &kb, &why), USB_CONFIG_KEYBOARD);
    assert_int_equal(kb.config_value, 1);
    assert_int_equal(kb.interface, 0);
    assert_int_equal(kb.endpoint, 0x81);
    assert_int_equal(kb.max_packet, 8);
    assert_int_equal(kb.interval, 10);
}

static void test_not_a_keyboard(void **state)
{
    (void)state;
    struct usb_kbd_iface kb = { 0 };
    const char *why = 0;
    uint8_t c[34];
    memcpy(c, kbd_config, sizeof c);
    c[9 + 7] = 2; /* a boot mouse */
    assert_int_equal(usb_config_find_keyboard(c, sizeof c, &kb, &why), USB_CONFIG_NO_KEYBOARD);
    memcpy(c, kbd_config, sizeof c);
    c[27 + 2] = 0x01; /* its endpoint is OUT */
    assert_int_equal(usb_config_find_keyboard(c, sizeof c, &kb, &why), USB_CONFIG_NO_KEYBOARD);
    memcpy(c, kbd_config, sizeof c);
    c[27 + 3] = 0x02; /* bulk, not interrupt */
    assert_int_equal(usb_config_find_keyboard(c, sizeof c, &kb, &why), USB_CONFIG_NO_KEYBOARD);
    assert_int_equal(kb.endpoint, 0); /* nothing handed back */
}

/* QEMU's usb-hub's configuration: one interface of class 9 and its status-change endpoint (2 bytes, 255 ms). */
static const uint8_t hub_config[25] = {
    9, 2, 25, 0, 1, 1, 0, 0xE0, 0,
    9, 4, 0, 0, 1, 9, 0, 0, 0,
    7, 5, 0x81, 0x03, 2, 0, 0xFF,
};

static void test_hub_interface_found(void **state)
{
    (void)state;
    struct usb_kbd_iface h = { 0 };
    const char *why = 0;
    assert_int_equal(usb_config_find_hub(hub_config, sizeof hub_config, &h, &why), USB_CONFIG_KEYBOARD);
    assert_int_equal(h.endpoint, 0x81);
    assert_int_equal(h.max_packet, 2);
    assert_int_equal(h.interval, 255);
    /* a hub is not a keyboard, nor a keyboard a hub */
    assert_int_equal(usb_config_find_keyboard(hub_config, sizeof hub_config, &h, &why), USB_CONFIG_NO_KEYBOARD);
    struct usb_kbd_iface k = { 0 };
    assert_int_equal(usb_config_find_hub(kbd_config, sizeof kbd_config, &k, &why), USB_CONFIG_NO_KEYBOARD);
    assert_int_equal(k.endpoint, 0);
    uint8_t c[25];
    memcpy(c, hub_config, sizeof c);
    c[9 + 7] = 2; /* a multi-TT hub's protocol is still a hub */
    assert_int_equal(usb_config_find_hub(c, sizeof c, &h, &why), USB_CONFIG_KEYBOARD);
    c[18 + 4] = 0; /* a zero packet size on its status-change endpoint */
    why = 0;
    assert_int_equal(usb_config_find_hub(c, sizeof c, &k, &why), USB_CONFIG_BAD);
    assert_non_null(why);
}

static void expect_bad(const uint8_t *c, size_t len)
{
    struct usb_kbd_iface kb = { 0 };
    const char *why = 0;
    assert_int_equal(usb_config_find_keyboard(c, len, &kb, &why), USB_CONFIG_BAD);
    assert_non_null(why);
    assert_int_equal(kb.endpoint, 0);
}

static void test_bad_configurations_refused(void **state)
{
    (void)state;
    uint8_t c[40];
    memcpy(c, kbd_config, 34);
    expect_bad(c, 33);                 /* wTotalLength past what the device sent */
    expect_bad(c, 8);                  /* not even the configuration descriptor */
    c[1] = 4;
    expect_bad(c, 34);                 /* wrong type */
    memcpy(c, kbd_config, 34);
    c[2] = 5;
    expect_bad(c, 34);                 /* total shorter than its own descriptor */
    memcpy(c, kbd_config, 34);
    c[27] = 1;
    expect_bad(c, 34);                 /* bLength under 2: the walk would never move */
    memcpy(c, kbd_config, 34);
    c[27] = 8;
    expect_bad(c, 34);                 /* bLength running past the end */
    memcpy(c, kbd_config, 34);
    c[9] = 8;
    c[9 + 8] = 0;
    expect_bad(c, 34);                 /* an interface descriptor of 8 bytes: walks on into the HID one */
    memcpy(c, kbd_config, 34);
    c[27] = 6;
    expect_bad(c, 34);                 /* an endpoint descriptor of 6 bytes */
    memcpy(c, kbd_config, 34);
    c[9 + 4] = 0;
    expect_bad(c, 34);                 /* more endpoints than the interface's bNumEndpoints */
    memcpy(c, kbd_config, 34);
    c[27 + 2] = 0x80;
    expect_bad(c, 34);                 /* endpoint 0 named in an endpoint descriptor */
    memcpy(c, kbd_config, 34);
    c[27 + 4] = 0;
    expect_bad(c, 34);                 /* zero packet size */
    memcpy(c, kbd_config, 34);
    c[27 + 6] = 0;
    expect_bad(c, 34);                 /* zero interval */
    memcpy(c, kbd_config, 34);
    c[2] = 35;
    c[34] = 1;                         /* a dangling header byte inside wTotalLength */
    expect_bad(c, 35);
}

UNIT_MAIN(NULL, NULL,
          test_device_descriptor_read, test_bad_device_descriptors_refused, test_keyboard_found, test_not_a_keyboard,
          test_hub_interface_found, test_bad_configurations_refused)
