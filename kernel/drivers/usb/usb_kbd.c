/* kernel/drivers/usb/usb_kbd.c: boot keyboard reports into console characters, with key repeat (see the header).
 * The map is the US layout, as arch/x86_64/ps2kbd.c's: Ctrl with a letter gives its control code (Ctrl-C 0x03,
 * Ctrl-U 0x15), Enter gives '\r' as a serial terminal does, Delete gives 0x7F. The line editor
 * (kernel/shell/lineedit.c) has no cursor movement, so arrows, Home and End produce nothing rather than an
 * escape sequence whose tail it would take as typed text. */
#include "kernel/drivers/usb/usb_kbd.h"

#include <string.h>

#define MOD_CTRL 0x11  /* left and right Ctrl */
#define MOD_SHIFT 0x22 /* left and right Shift */
#define USAGE_ROLLOVER 0x01
#define USAGE_A 0x04
#define USAGE_Z 0x1D
#define USAGE_DELETE 0x4C

/* Usages 0x1E..0x38: digits, Enter, Esc, Backspace, Tab, Space and punctuation, plain and shifted. */
#define FIRST_MAPPED 0x1E
static const char plain[] = "1234567890\r\x1b\b\t -=[]\\#;'`,./";
static const char shifted[] = "!@#$%^&*()\r\x1b\b\t _+{}|~:\"~<>?";
/* Keypad 0x54..0x63, taken as if Num Lock were on (a boot keyboard's lock state is the host's to keep). */
#define FIRST_KEYPAD 0x54
static const char keypad[] = "/*-+\r1234567890.";

void usb_kbd_init(struct usb_kbd *k) { memset(k, 0, sizeof *k); }

size_t usb_kbd_usage_chars(uint8_t usage, uint8_t mods, char *out)
{
    bool shift = mods & MOD_SHIFT, ctrl = mods & MOD_CTRL;
    char c = 0;
    if (usage >= USAGE_A && usage <= USAGE_Z) {
        c = (char)((shift ? 'A' : 'a') + (usage - USAGE_A));
        if (ctrl)
            c = (char)(usage - USAGE_A + 1);
    } else if (usage >= FIRST_MAPPED && usage < FIRST_MAPPED + sizeof plain - 1) {
        c = shift ? shifted[usage - FIRST_MAPPED] : plain[usage - FIRST_MAPPED];
    } else if (usage >= FIRST_KEYPAD && usage < FIRST_KEYPAD + sizeof keypad - 1) {
        c = keypad[usage - FIRST_KEYPAD];
    } else if (usage == USAGE_DELETE) {
        c = 0x7F;
    }
    if (!c)
        return 0;
    out[0] = c;
    return 1;
}

static bool held(const uint8_t *report, size_t len, uint8_t usage)
{
    for (size_t i = 2; i < len; i++)
        if (report[i] == usage)
            return true;
    return false;
}

size_t usb_kbd_report(struct usb_kbd *k, const uint8_t *report, size_t len, int64_t now_ns, char *out)
{
    if (len < 3)
        return 0;
    if (len > USB_KBD_REPORT_LEN)
        len = USB_KBD_REPORT_LEN; /* a boot report is 8 bytes; anything after is not ours to read */
    if (report[2] == USAGE_ROLLOVER)
        return 0; /* phantom state: keys are held but which is unknown; wait for a real report */
    uint8_t now[USB_KBD_REPORT_LEN] = { 0 };
    memcpy(now, report, len);
    size_t n = 0;
    uint8_t newest = 0;
    for (size_t i = 2; i < USB_KBD_REPORT_LEN; i++) {
        uint8_t u = now[i];
        if (u <= USAGE_ROLLOVER || held(k->prev, USB_KBD_REPORT_LEN, u) || held(now, i, u))
            continue; /* no key, an error code, held already, or listed twice in this report */
        char c[USB_KBD_OUT_MAX];
        size_t m = usb_kbd_usage_chars(u, now[0], c);
        if (m && n + m <= USB_KBD_OUT_MAX) {
            memcpy(out + n, c, m);
            n += m;
        }
        newest = u;
    }
    if (newest) { /* the key pressed last repeats, whatever else is held */
        k->repeat_usage = newest;
        k->repeat_at_ns = now_ns + USB_KBD_REPEAT_DELAY_NS;
    } else if (k->repeat_usage && !held(now, USB_KBD_REPORT_LEN, k->repeat_usage)) {
        k->repeat_usage = 0; /* released */
    }
    memcpy(k->prev, now, sizeof now);
    return n;
}

size_t usb_kbd_tick(struct usb_kbd *k, int64_t now_ns, char *out)
{
    if (!k->repeat_usage || now_ns - k->repeat_at_ns < 0)
        return 0;
    k->repeat_at_ns += USB_KBD_REPEAT_PERIOD_NS;
    if (now_ns - k->repeat_at_ns >= 0)
        k->repeat_at_ns = now_ns + USB_KBD_REPEAT_PERIOD_NS; /* late: go on from now rather than catch up */
    return usb_kbd_usage_chars(k->repeat_usage, k->prev[0], out);
}

int64_t usb_kbd_deadline(const struct usb_kbd *k) { return k->repeat_usage ? k->repeat_at_ns : INT64_MAX; }
