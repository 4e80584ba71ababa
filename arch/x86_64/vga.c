/* arch/x86_64/vga.c: the VGA text screen at 0xB8000, 80x25, which mirrors the console for whoever watches
 * the machine's display. No scrollback: new lines scroll the oldest off the top. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "kernel/lib/string.h"

#define VGA_COLS 80
#define VGA_ROWS 25
#define VGA_ATTR 0x0700

static volatile uint16_t *const screen = (volatile uint16_t *)0xB8000;
static unsigned row, col;

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

void vga_write(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n') {
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
