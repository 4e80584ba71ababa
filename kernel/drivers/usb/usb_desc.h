/* kernel/drivers/usb/usb_desc.h: USB descriptors as a device hands them back, judged -- the device descriptor, and a
 * configuration descriptor set searched for a HID boot keyboard (or a hub) and its interrupt IN endpoint. Pure
 * functions over bytes, no hardware behind them, so the host can feed them garbage (tests/unit/test_usb_desc.c,
 * tests/fuzz/fuzz_usb_desc.c). Nothing a device sends is trusted: every length is checked against both the
 * descriptor's own bLength and the bytes actually received. */
#ifndef KERNEL_DRIVERS_USB_USB_DESC_H
#define KERNEL_DRIVERS_USB_USB_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USB_DESC_DEVICE 1
#define USB_DESC_CONFIG 2
#define USB_DESC_INTERFACE 4
#define USB_DESC_ENDPOINT 5
#define USB_CLASS_HID 3
#define USB_CLASS_HUB 9
#define USB_DEVICE_DESC_LEN 18
#define USB_CONFIG_DESC_LEN 9

struct usb_device_info {
    uint16_t vendor, product;
    uint8_t device_class;
    uint8_t max_packet0;   /* endpoint 0's packet size: 8, 16, 32, 64 (USB 2) or 9 meaning 512 (USB 3) */
    uint8_t configurations;
};

/* The boot keyboard a configuration offers. */
struct usb_kbd_iface {
    uint8_t config_value;  /* for SET_CONFIGURATION */
    uint8_t interface;     /* bInterfaceNumber, for SET_PROTOCOL and SET_IDLE */
    uint8_t endpoint;      /* bEndpointAddress: number 1..15 with the IN bit 0x80 */
    uint16_t max_packet;   /* wMaxPacketSize's size bits, 1..1024 */
    uint8_t interval;      /* bInterval as the device gave it, 1..255 */
};

enum usb_config_verdict {
    USB_CONFIG_KEYBOARD,    /* *out names a boot keyboard interface and its interrupt IN endpoint */
    USB_CONFIG_NO_KEYBOARD, /* well-formed, but no interface is a boot keyboard with such an endpoint */
    USB_CONFIG_BAD,         /* malformed: *why says how; nothing in it is used */
};

/* len bytes received for GET_DESCRIPTOR(device). False with *why unless it is a whole, sane device descriptor. */
bool usb_device_desc_parse(const uint8_t *buf, size_t len, struct usb_device_info *out, const char **why);

/* The total length a configuration descriptor's first len bytes announce (wTotalLength); 0 with *why when
 * those bytes are not the start of a configuration descriptor. */
uint16_t usb_config_total_length(const uint8_t *buf, size_t len, const char **why);

/* len bytes received for GET_DESCRIPTOR(configuration, wTotalLength): the whole set is walked, every
 * descriptor's bLength checked (at least 2, within wTotalLength and within len), and the first interface of
 * class HID, subclass 1 (boot), protocol 1 (keyboard) with an interrupt IN endpoint among its own endpoints is
 * reported. */
enum usb_config_verdict usb_config_find_keyboard(const uint8_t *buf, size_t len, struct usb_kbd_iface *out,
                                                 const char **why);

/* The same walk for a hub: the first interface of class 9 (hub), subclass 0, any protocol, and its interrupt
 * IN (status-change) endpoint; USB_CONFIG_NO_KEYBOARD means no such interface. */
enum usb_config_verdict usb_config_find_hub(const uint8_t *buf, size_t len, struct usb_kbd_iface *out,
                                            const char **why);

#endif
