/* arch/x86_64/vga.c: the VGA text screen at 0xB8000, 80x25, which mirrors the console for whoever watches
 * the machine's display. No scrollback: new lines scroll the oldest off the top. The few control sequences
 * the console sends (cursor home, erase below, erase the line: kernel/lib/ansi.h) act here as on a terminal. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "kernel/lib/ansi.h"
#include "kernel/lib/string.h"

#define VGA_COLS 80
#define VGA_ROWS 25
#define VGA_ATTR 0x0700

static volatile uint16_t *const screen = (volatile uint16_t *)0xB8000;
static unsigned row, col;
static struct ansi_parser ansi; /* zero is its text state */

static void move_cursor(void)
{
    unsigned pos = row * VGA_COLS + col;
    outb(0x3D4, 0x0F);
    outb(0x3D5, pos & 0xFF);
    outb(0x3D4, 0x0E);
    outb(0x3D5, (pos >> 8) & 0xFF);
}

static void clear_row(unsigned r)
{
    for (unsigned c = 0; c < VGA_COLS; c++)
        screen[r * VGA_COLS + c] = VGA_ATTR | ' ';
}

void vga_init(void)
{
    for (unsigned r = 0; r < VGA_ROWS; r++)
        clear_row(r);
    row = col = 0;
    move_cursor();
}

static void newline(void)
{
    col = 0;
    if (++row < VGA_ROWS)
        return;
    for (unsigned i = 0; i < (VGA_ROWS - 1) * VGA_COLS; i++)
        screen[i] = screen[i + VGA_COLS];
    clear_row(VGA_ROWS - 1);
    row = VGA_ROWS - 1;
}

/* A sequence's action; false when it was an ordinary byte. */
static bool control(char c)
{
    unsigned r = 0, k = 0;
    switch (ansi_feed(&ansi, c, &r, &k)) {
    case ANSI_TEXT:
        return false;
    case ANSI_MOVE:
        row = r < VGA_ROWS ? r : VGA_ROWS - 1;
        col = k < VGA_COLS ? k : VGA_COLS - 1;
        break;
    case ANSI_ERASE_SCREEN:
        for (unsigned i = 0; i < VGA_ROWS; i++)
            clear_row(i);
        break;
    case ANSI_ERASE_BELOW:
        for (unsigned i = row + 1; i < VGA_ROWS; i++)
            clear_row(i);
        /* fall through: and the rest of the cursor's row */
    case ANSI_ERASE_LINE:
        for (unsigned i = col; i < VGA_COLS; i++)
            screen[row * VGA_COLS + i] = VGA_ATTR | ' ';
        break;
    case ANSI_SWALLOWED:
        break;
    }
    return true;
}

void vga_write(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (control(c)) {
            continue;
        } else if (c == '\n') {
            newline();
        } else if (c == '\r') {
            col = 0;
        } else if (c == '\b') {
            if (col > 0)
                col--;
        } else if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7F) {
            screen[row * VGA_COLS + col] = VGA_ATTR | (uint8_t)c;
            if (++col == VGA_COLS)
                newline();
        }
    }
    move_cursor();
}
