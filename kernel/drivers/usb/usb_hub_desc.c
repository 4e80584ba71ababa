/* kernel/drivers/usb/usb_hub_desc.c: judging what a USB hub hands back, and the route strings of the devices behind
 * it (see the header). Nothing is read past the bytes received. */
#include "kernel/drivers/usb/usb_hub_desc.h"

#define PS_CONNECTION (1u << 0)
#define PS_ENABLE (1u << 1)
#define PS_OVER_CURRENT (1u << 3)
#define PS_RESET (1u << 4)
#define PS_POWER (1u << 8)
#define PS_LOW_SPEED (1u << 9)
#define PS_HIGH_SPEED (1u << 10)
#define SPEED_FULL 1
#define SPEED_LOW 2
#define SPEED_HIGH 3

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

bool usb_hub_desc_parse(const uint8_t *buf, size_t len, struct usb_hub_info *out, const char **why)
{
    if (len < 3 || buf[1] != USB_DESC_HUB) {
        *why = "the hub descriptor came back short or of the wrong type";
        return false;
    }
    unsigned ports = buf[2];
    if (ports == 0 || ports > USB_HUB_MAX_PORTS) {
        *why = "the hub says it has no ports or more than 15";
        return false;
    }
    /* DeviceRemovable has a bit per port and one reserved (ports + 1 bits). PortPwrCtrlMask, USB 1.0's, is not
     * required: hubs size it differently (QEMU's by ports alone) and nothing here reads it. */
    unsigned bitmap = (ports + 1 + 7) / 8;
    if (buf[0] < 7 + bitmap || buf[0] > len) {
        *why = "the hub descriptor's bLength is too short for its ports or past the bytes received";
        return false;
    }
    unsigned good = (unsigned)buf[5] * 2;
    *out = (struct usb_hub_info){ .ports = (uint8_t)ports, .power_on_ms = (uint8_t)(good > 254 ? 254 : good),
                                  .think_time = (uint8_t)((le16(buf + 3) >> 5) & 3) };
    return true;
}

bool usb_hub_port_status(const uint8_t *buf, size_t len, struct usb_hub_port *out, const char **why)
{
    if (len < 4) {
        *why = "the hub's port status came back short";
        return false;
    }
    uint16_t st = le16(buf), ch = le16(buf + 2);
    *out = (struct usb_hub_port){
        .connected = st & PS_CONNECTION, .enabled = st & PS_ENABLE, .reset = st & PS_RESET,
        .powered = st & PS_POWER, .over_current = st & PS_OVER_CURRENT,
        /* low speed wins when a hub sets both: USB 2.0 says high speed is only meaningful without it */
        .speed = (st & PS_LOW_SPEED) ? SPEED_LOW : (st & PS_HIGH_SPEED) ? SPEED_HIGH : SPEED_FULL,
        .changes = ch & USB_HUB_C_DEFINED,
    };
    return true;
}

uint16_t usb_hub_change_bits(const uint8_t *buf, size_t len, unsigned ports)
{
    if (ports > USB_HUB_MAX_PORTS)
        ports = USB_HUB_MAX_PORTS;
    uint16_t bits = 0;
    for (unsigned n = 1; n <= ports && n / 8 < len; n++)
        if (buf[n / 8] & (1u << (n % 8)))
            bits |= (uint16_t)(1u << n);
    return bits;
}

bool usb_hub_route(uint32_t parent_route, unsigned parent_tier, unsigned port, uint32_t *route)
{
    if (port == 0 || port > USB_HUB_MAX_PORTS || parent_tier >= USB_HUB_MAX_TIERS)
        return false;
    *route = (parent_route & ((1u << (4 * parent_tier)) - 1)) | (uint32_t)port << (4 * parent_tier);
    return true;
}

void usb_hub_path(unsigned root, uint32_t route, unsigned tiers, char *out)
{
    char *o = out;
    if (root >= 10)
        *o++ = (char)('0' + root / 10 % 10);
    *o++ = (char)('0' + root % 10);
    for (unsigned t = 0; t < tiers && t < USB_HUB_MAX_TIERS; t++) {
        unsigned p = (route >> (4 * t)) & 0xF;
        *o++ = '.';
        if (p >= 10)
            *o++ = '1';
        *o++ = (char)('0' + p % 10);
    }
    *o = 0;
}

struct usb_hub_tt usb_hub_tt_for(unsigned dev_speed, unsigned hub_speed, uint8_t hub_slot, unsigned port,
                                 struct usb_hub_tt hub_tt)
{
    if (dev_speed != SPEED_FULL && dev_speed != SPEED_LOW)
        return (struct usb_hub_tt){ 0, 0 };
    if (hub_speed == SPEED_HIGH)
        return (struct usb_hub_tt){ hub_slot, (uint8_t)port };
    return hub_tt;
}
