/* kernel/drivers/usb/usb_kbd.h: a HID boot keyboard as console input -- its 8-byte boot reports (modifier bits, a
 * reserved byte, up to six usages of keys held) diffed against the previous report into key presses, usages
 * turned into the ASCII the console line editor takes (US layout; Shift, Ctrl), and key repeat done here since
 * a boot keyboard only reports changes. Pure: time is passed in and characters come back in a buffer, so the
 * host tests drive it (tests/unit/test_usb_kbd.c); the xHCI driver feeds it and hands the characters to the
 * console. */
#ifndef KERNEL_DRIVERS_USB_USB_KBD_H
#define KERNEL_DRIVERS_USB_USB_KBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USB_KBD_REPORT_LEN 8
#define USB_KBD_REPEAT_DELAY_NS 500000000ll /* a held key starts repeating after this */
#define USB_KBD_REPEAT_PERIOD_NS 33333333ll /* and then repeats about 30 times a second */
#define USB_KBD_OUT_MAX 12                  /* characters one report or tick can produce at most */

struct usb_kbd {
    uint8_t prev[USB_KBD_REPORT_LEN]; /* the last report taken */
    uint8_t repeat_usage;             /* the key that repeats while held (0: none) */
    int64_t repeat_at_ns;             /* when it next repeats */
};

void usb_kbd_init(struct usb_kbd *k);

/* A report of len bytes arriving at now_ns. Fills out (USB_KBD_OUT_MAX bytes) with the characters of the keys
 * newly pressed, in report order, and returns how many. A report shorter than 3 bytes or a phantom report
 * (every usage ErrorRollOver: too many keys held) changes nothing and returns 0. */
size_t usb_kbd_report(struct usb_kbd *k, const uint8_t *report, size_t len, int64_t now_ns, char *out);

/* Time passing: the repeat's character when it is due at now_ns (one at most: a late call does not burst). */
size_t usb_kbd_tick(struct usb_kbd *k, int64_t now_ns, char *out);

/* When usb_kbd_tick next has something to do; INT64_MAX when no key repeats. */
int64_t usb_kbd_deadline(const struct usb_kbd *k);

/* One usage with the modifier byte mods, as characters in out (USB_KBD_OUT_MAX bytes); 0 for keys with no
 * meaning to the line editor. */
size_t usb_kbd_usage_chars(uint8_t usage, uint8_t mods, char *out);

#endif
