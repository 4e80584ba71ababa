/* tests/unit/test_usb_kbd.c: a boot keyboard's reports as console characters (kernel/drivers/usb/usb_kbd.c) -- only
 * newly pressed keys type, Shift and Ctrl apply, the keys the line editor uses give its bytes, phantom and short
 * reports change nothing, and a held key repeats after the delay at the period until released or replaced. Time
 * is passed in, so the repeat is checked at exact instants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/drivers/usb/usb_kbd.h"
#include "unit_main.h"

#define MS 1000000ll
#define U_A 0x04
#define U_C 0x06
#define U_H 0x0B
#define U_U 0x18
#define U_1 0x1E
#define U_ENTER 0x28
#define U_ESC 0x29
#define U_BACKSPACE 0x2A
#define U_TAB 0x2B
#define U_SPACE 0x2C
#define U_DELETE 0x4C
#define U_RIGHT 0x4F
#define LSHIFT 0x02
#define LCTRL 0x01
#define RSHIFT 0x20

/* The keyboard under test, fresh for each test, and what it typed last. */
static struct usb_kbd k;
static char out[USB_KBD_OUT_MAX];

static int fresh(void **state)
{
    (void)state;
    usb_kbd_init(&k);
    return 0;
}

static size_t feed(struct usb_kbd *k, uint8_t mods, uint8_t a, uint8_t b, int64_t t, char *out)
{
    uint8_t r[8] = { mods, 0, a, b, 0, 0, 0, 0 };
    return usb_kbd_report(k, r, sizeof r, t, out);
}

static void test_press_types_once_release_types_nothing(void **state)
{
    (void)state;
    assert_int_equal(feed(&k, 0, U_H, 0, 0, out), 1);
    assert_int_equal(out[0], 'h');
    assert_int_equal(feed(&k, 0, U_H, 0, 1 * MS, out), 0);     /* still held: no second 'h' */
    assert_int_equal(feed(&k, 0, U_H, U_A, 2 * MS, out), 1);   /* a second key joins */
    assert_int_equal(out[0], 'a');
    assert_int_equal(feed(&k, 0, 0, 0, 3 * MS, out), 0);       /* all released */
    assert_int_equal(feed(&k, 0, U_1, U_SPACE, 4 * MS, out), 2); /* two at once, in report order */
    assert_memory_equal(out, "1 ", 2);
}

static void test_modifiers_and_editor_keys(void **state)
{
    (void)state;
    struct { uint8_t mods, usage; char want; } cases[] = {
        { LSHIFT, U_A, 'A' }, { RSHIFT, U_1, '!' }, { LCTRL, U_C, 0x03 }, { LCTRL, U_U, 0x15 },
        { 0, U_ENTER, '\r' }, { 0, U_BACKSPACE, '\b' }, { 0, U_TAB, '\t' }, { 0, U_ESC, 0x1b },
        { 0, U_DELETE, 0x7f }, { 0, 0x38, '/' }, { LSHIFT, 0x38, '?' }, { 0, 0x2D, '-' }, { 0, 0x62, '0' },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        usb_kbd_init(&k);
        assert_int_equal(feed(&k, cases[i].mods, cases[i].usage, 0, 0, out), 1);
        assert_int_equal(out[0], cases[i].want);
    }
    usb_kbd_init(&k);
    assert_int_equal(feed(&k, 0, U_RIGHT, 0, 0, out), 0); /* the editor has no cursor keys: nothing typed */
}

static void test_phantom_and_short_reports_change_nothing(void **state)
{
    (void)state;
    assert_int_equal(feed(&k, 0, U_H, 0, 0, out), 1);
    assert_int_equal(feed(&k, 0, 0x01, 0x01, 1 * MS, out), 0); /* ErrorRollOver: too many keys */
    assert_int_equal(feed(&k, 0, U_H, 0, 2 * MS, out), 0);     /* h was held all along */
    uint8_t r[2] = { 0, 0 };
    assert_int_equal(usb_kbd_report(&k, r, 2, 3 * MS, out), 0);
    assert_int_equal(feed(&k, 0, U_H, 0, 4 * MS, out), 0);
    /* a long report is read as its first 8 bytes */
    uint8_t longer[16] = { 0, 0, U_H, 0, 0, 0, 0, 0, U_A, U_A };
    assert_int_equal(usb_kbd_report(&k, longer, sizeof longer, 5 * MS, out), 0);
}

static void test_held_key_repeats_after_delay_then_at_period(void **state)
{
    (void)state;
    assert_int_equal(usb_kbd_deadline(&k), INT64_MAX);
    assert_int_equal(feed(&k, 0, U_A, 0, 1000 * MS, out), 1);
    int64_t first = 1000 * MS + USB_KBD_REPEAT_DELAY_NS;
    assert_int_equal(usb_kbd_deadline(&k), first);
    assert_int_equal(usb_kbd_tick(&k, first - 1, out), 0);
    assert_int_equal(usb_kbd_tick(&k, first, out), 1);
    assert_int_equal(out[0], 'a');
    assert_int_equal(usb_kbd_tick(&k, first + 1, out), 0);
    assert_int_equal(usb_kbd_deadline(&k), first + USB_KBD_REPEAT_PERIOD_NS);
    assert_int_equal(usb_kbd_tick(&k, first + USB_KBD_REPEAT_PERIOD_NS, out), 1);
    /* a late look gives one character, not a burst, and goes on from then */
    int64_t late = first + 10 * USB_KBD_REPEAT_PERIOD_NS;
    assert_int_equal(usb_kbd_tick(&k, late, out), 1);
    assert_int_equal(usb_kbd_tick(&k, late, out), 0);
    assert_int_equal(usb_kbd_deadline(&k), late + USB_KBD_REPEAT_PERIOD_NS);
    /* Shift pressed while held: the repeat follows it */
    assert_int_equal(feed(&k, LSHIFT, U_A, 0, late + 1, out), 0);
    assert_int_equal(usb_kbd_tick(&k, late + USB_KBD_REPEAT_PERIOD_NS, out), 1);
    assert_int_equal(out[0], 'A');
    /* released: no more */
    assert_int_equal(feed(&k, 0, 0, 0, late + 2 * USB_KBD_REPEAT_PERIOD_NS, out), 0);
    assert_int_equal(usb_kbd_deadline(&k), INT64_MAX);
    assert_int_equal(usb_kbd_tick(&k, late + 100 * USB_KBD_REPEAT_PERIOD_NS, out), 0);
}

static void test_another_key_takes_over_the_repeat(void **state)
{
    (void)state;
    feed(&k, 0, U_A, 0, 0, out);
    assert_int_equal(feed(&k, 0, U_A, U_H, 400 * MS, out), 1);
    assert_int_equal(usb_kbd_tick(&k, 500 * MS, out), 0); /* a's delay was restarted by h */
    assert_int_equal(usb_kbd_tick(&k, 900 * MS, out), 1);
    assert_int_equal(out[0], 'h');
    /* h released, a still held: a does not start repeating again on its own */
    assert_int_equal(feed(&k, 0, U_A, 0, 950 * MS, out), 0);
    assert_int_equal(usb_kbd_tick(&k, 5000 * MS, out), 0);
}

UNIT_MAIN_EACH(fresh, NULL, NULL, NULL,
               test_press_types_once_release_types_nothing, test_modifiers_and_editor_keys,
               test_phantom_and_short_reports_change_nothing, test_held_key_repeats_after_delay_then_at_period,
               test_another_key_takes_over_the_repeat)
