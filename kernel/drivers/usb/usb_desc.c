/* kernel/drivers/usb/usb_desc.c: judging the descriptors a USB device hands back (see the header). The walk over a
 * configuration never reads a byte past the smaller of what the device announced and what it sent. */
#include "kernel/drivers/usb/usb_desc.h"

#define ENDPOINT_IN 0x80
#define ENDPOINT_NUMBER 0x0F
#define ENDPOINT_XFER_MASK 0x03
#define ENDPOINT_XFER_INTERRUPT 0x03
#define INTERFACE_DESC_LEN 9
#define ENDPOINT_DESC_LEN 7
#define HID_SUBCLASS_BOOT 1
#define HID_PROTOCOL_KEYBOARD 1

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

bool usb_device_desc_parse(const uint8_t *buf, size_t len, struct usb_device_info *out, const char **why)
{
    if (len < USB_DEVICE_DESC_LEN) {
        *why = "the device descriptor came back short";
        return false;
    }
    if (buf[0] < USB_DEVICE_DESC_LEN || buf[1] != USB_DESC_DEVICE) {
        *why = "the device descriptor has a wrong length or type";
        return false;
    }
    uint8_t mp = buf[7];
    if (mp != 8 && mp != 16 && mp != 32 && mp != 64 && mp != 9) {
        *why = "the device descriptor's endpoint 0 packet size is not 8, 16, 32, 64 or 512";
        return false;
    }
    if (buf[17] == 0) {
        *why = "the device has no configuration";
        return false;
    }
    *out = (struct usb_device_info){ .vendor = le16(buf + 8), .product = le16(buf + 10), .device_class = buf[4],
                                     .max_packet0 = mp, .configurations = buf[17] };
    return true;
}

uint16_t usb_config_total_length(const uint8_t *buf, size_t len, const char **why)
{
    if (len < USB_CONFIG_DESC_LEN || buf[0] < USB_CONFIG_DESC_LEN || buf[1] != USB_DESC_CONFIG) {
        *why = "the configuration descriptor is short or of the wrong type";
        return 0;
    }
    uint16_t total = le16(buf + 2);
    if (total < buf[0]) {
        *why = "the configuration's total length is shorter than its own descriptor";
        return 0;
    }
    return total;
}

/* The walk: the first interface of class cls, subclass sub and (protocol >= 0) that protocol with an interrupt IN
 * endpoint among its own. */
static enum usb_config_verdict find_interface(const uint8_t *buf, size_t len, uint8_t cls, uint8_t sub,
                                              int protocol, struct usb_kbd_iface *out, const char **why)
{
    uint16_t total = usb_config_total_length(buf, len, why);
    if (total == 0)
        return USB_CONFIG_BAD;
    if (total > len) {
        *why = "the configuration is longer than the bytes the device sent";
        return USB_CONFIG_BAD;
    }
    struct usb_kbd_iface found = { .config_value = buf[5] };
    bool in_match = false, have = false;
    unsigned endpoints_left = 0;
    for (size_t at = buf[0]; at < total;) {
        if (total - at < 2) {
            *why = "a descriptor header is cut off at the end of the configuration";
            return USB_CONFIG_BAD;
        }
        uint8_t blen = buf[at], type = buf[at + 1];
        if (blen < 2 || blen > total - at) {
            *why = "a descriptor's bLength is under 2 or runs past the configuration's end";
            return USB_CONFIG_BAD;
        }
        const uint8_t *d = buf + at;
        if (type == USB_DESC_INTERFACE) {
            if (blen < INTERFACE_DESC_LEN) {
                *why = "an interface descriptor is shorter than 9 bytes";
                return USB_CONFIG_BAD;
            }
            in_match = !have && d[5] == cls && d[6] == sub && (protocol < 0 || d[7] == protocol);
            endpoints_left = d[4];
            if (in_match)
                found.interface = d[2];
        } else if (type == USB_DESC_ENDPOINT) {
            if (blen < ENDPOINT_DESC_LEN) {
                *why = "an endpoint descriptor is shorter than 7 bytes";
                return USB_CONFIG_BAD;
            }
            if (endpoints_left == 0) {
                *why = "an interface has more endpoint descriptors than its bNumEndpoints";
                return USB_CONFIG_BAD;
            }
            endpoints_left--;
            uint8_t addr = d[2];
            uint16_t mps = le16(d + 4) & 0x7FF;
            if ((addr & ENDPOINT_NUMBER) == 0 || (addr & 0x70)) {
                *why = "an endpoint descriptor names endpoint 0 or sets reserved address bits";
                return USB_CONFIG_BAD;
            }
            if (in_match && !have && (addr & ENDPOINT_IN) &&
                (d[3] & ENDPOINT_XFER_MASK) == ENDPOINT_XFER_INTERRUPT) {
                if (mps == 0 || d[6] == 0) {
                    *why = "the interface's interrupt endpoint has a zero packet size or interval";
                    return USB_CONFIG_BAD;
                }
                found.endpoint = addr;
                found.max_packet = mps;
                found.interval = d[6];
                have = true;
            }
        }
        at += blen;
    }
    if (!have)
        return USB_CONFIG_NO_KEYBOARD;
    *out = found;
    return USB_CONFIG_KEYBOARD;
}

enum usb_config_verdict usb_config_find_keyboard(const uint8_t *buf, size_t len, struct usb_kbd_iface *out,
                                                 const char **why)
{
    return find_interface(buf, len, USB_CLASS_HID, HID_SUBCLASS_BOOT, HID_PROTOCOL_KEYBOARD, out, why);
}

enum usb_config_verdict usb_config_find_hub(const uint8_t *buf, size_t len, struct usb_kbd_iface *out,
                                            const char **why)
{
    return find_interface(buf, len, USB_CLASS_HUB, 0, -1, out, why); /* any protocol: single or multi TT */
}
