/* arch/x86_64/ps2kbd.c: the PS/2 keyboard on IRQ 1, a second console input beside COM1. The i8042 hands us
 * scan code set 1 (it translates by default); this turns make codes into ASCII with Shift and Ctrl, and
 * feeds console_input_char(). Keys with no ASCII meaning are ignored. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "hal/platform.h"
#include "kernel/log.h"

#define KBD_DATA 0x60
#define KBD_STATUS 0x64
#define SC_LSHIFT 0x2A
#define SC_RSHIFT 0x36
#define SC_CTRL 0x1D
#define SC_RELEASE 0x80

static const char plain[0x3A] = {
    0, 27, '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '-', '=', '\b', '\t',
    'q', 'w', 'e', 'r', 't', 'y', 'u', 'i', 'o', 'p', '[', ']', '\n', 0, 'a', 's',
    'd', 'f', 'g', 'h', 'j', 'k', 'l', ';', '\'', '`', 0, '\\', 'z', 'x', 'c', 'v',
    'b', 'n', 'm', ',', '.', '/', 0, '*', 0, ' ',
};
static const char shifted[0x3A] = {
    0, 27, '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', '_', '+', '\b', '\t',
    'Q', 'W', 'E', 'R', 'T', 'Y', 'U', 'I', 'O', 'P', '{', '}', '\n', 0, 'A', 'S',
    'D', 'F', 'G', 'H', 'J', 'K', 'L', ':', '"', '~', 0, '|', 'Z', 'X', 'C', 'V',
    'B', 'N', 'M', '<', '>', '?', 0, '*', 0, ' ',
};

static bool shift, ctrl, extended;

static void kbd_irq(void *arg)
{
    (void)arg;
    while (inb(KBD_STATUS) & 1) {
        uint8_t sc = inb(KBD_DATA);
        if (sc == 0xE0) {
            extended = true;
            continue;
        }
        bool release = sc & SC_RELEASE;
        uint8_t code = sc & ~SC_RELEASE;
        bool was_extended = extended;
        extended = false;
        if (code == SC_LSHIFT || code == SC_RSHIFT) {
            shift = !release;
            continue;
        }
        if (code == SC_CTRL) {
            ctrl = !release;
            continue;
        }
        if (release || was_extended || code >= sizeof plain)
            continue;
        char c = shift ? shifted[code] : plain[code];
        if (!c)
            continue;
        if (ctrl && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 1); /* Ctrl-U = 0x15, Ctrl-C = 0x03 */
        console_input_char(c);
    }
}

void ps2kbd_init(void)
{
    /* A machine without an i8042 (some UEFI-only PCs) reads 0xFF from the floating port: every status bit
     * set, output buffer always full. Leave the keyboard out rather than spin on it in the interrupt. */
    if (inb(KBD_STATUS) == 0xFF) {
        log_info("ps2kbd: no i8042 controller (status port reads 0xff): keyboard input off");
        return;
    }
    for (int i = 0; i < 32 && (inb(KBD_STATUS) & 1); i++) /* drop whatever the firmware left, boundedly */
        (void)inb(KBD_DATA);
    irq_attach_isa(1, kbd_irq, 0);
}
