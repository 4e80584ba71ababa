/* kernel/drivers/usb/usb_hub_desc.h: what a USB 2.0 hub hands back, judged -- its hub descriptor (class descriptor
 * 0x29), a port's GET_PORT_STATUS answer, and its status-change endpoint's bitmap -- and the xHCI route string
 * of a device behind hubs. Pure functions over bytes (tests/unit/test_usb_hub_desc.c, tests/fuzz/fuzz_usb_desc.c);
 * kernel/drivers/usb/usb_hub.c acts on nothing a hub says until it has passed here. Layouts: USB 2.0 section 11.23
 * and 11.24.2.7; route string: xHCI 1.2 section 8.9. */
#ifndef KERNEL_DRIVERS_USB_USB_HUB_DESC_H
#define KERNEL_DRIVERS_USB_USB_HUB_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USB_DESC_HUB 0x29
#define USB_HUB_MAX_PORTS 15   /* a route string tier is 4 bits */
#define USB_HUB_MAX_TIERS 5    /* hubs below a root port the route string can name */
#define USB_HUB_PATH_MAX 18    /* "99.15.15.15.15.15" and its NUL: root ports are named by two digits at most */

struct usb_hub_info {
    uint8_t ports;            /* 1..USB_HUB_MAX_PORTS */
    uint8_t power_on_ms;      /* bPwrOn2PwrGood x 2, capped at 254 */
    uint8_t think_time;       /* wHubCharacteristics bits 6:5: the TT think time code, for a high-speed hub */
};

/* The port status a hub reports, decoded. */
struct usb_hub_port {
    bool connected, enabled, reset, powered, over_current;
    uint8_t speed;            /* the xHCI speed code: 1 full, 2 low, 3 high */
    uint16_t changes;         /* wPortChange's defined bits (connection, enable, suspend, over-current, reset) */
};
#define USB_HUB_C_CONNECTION (1u << 0)
#define USB_HUB_C_RESET (1u << 4)
#define USB_HUB_C_DEFINED 0x1Fu

/* len bytes received for the hub descriptor. False with *why unless it is a whole, sane descriptor whose
 * bNbrPorts is 1..15. */
bool usb_hub_desc_parse(const uint8_t *buf, size_t len, struct usb_hub_info *out, const char **why);

/* len bytes received for GET_PORT_STATUS (4 are due). False with *why when short. */
bool usb_hub_port_status(const uint8_t *buf, size_t len, struct usb_hub_port *out, const char **why);

/* The ports (bit n for port n, 1..ports) a status-change report of len bytes names; bit 0 (the hub itself)
 * and bits past ports are dropped. */
uint16_t usb_hub_change_bits(const uint8_t *buf, size_t len, unsigned ports);

/* The route string of a device on port `port` of a hub whose own route string is parent_route at tier
 * parent_tier (0 for a hub on a root port). False when port is 0 or over 15, or the device would sit deeper
 * than the route string can say. */
bool usb_hub_route(uint32_t parent_route, unsigned parent_tier, unsigned port, uint32_t *route);

/* The transaction translator a device of speed dev_speed on port `port` of a hub goes through: a low- or
 * full-speed device behind a high-speed hub uses that hub's (its slot, that port); behind a full- or low-speed
 * hub, the one its hub goes through (hub_tt_slot/port, 0 when none); a high-speed device none. Speeds are xHCI
 * codes (1 full, 2 low, 3 high). */
struct usb_hub_tt {
    uint8_t slot, port;
};
struct usb_hub_tt usb_hub_tt_for(unsigned dev_speed, unsigned hub_speed, uint8_t hub_slot, unsigned port,
                                 struct usb_hub_tt hub_tt);

/* "R.a.b" for root port root and a route string of `tiers` tiers, into out[USB_HUB_PATH_MAX]. */
void usb_hub_path(unsigned root, uint32_t route, unsigned tiers, char *out);

#endif
