/* arch/x86_64/fbcon.c: a text console drawn on a linear 32 bpp RGB framebuffer -- what GRUB hands over under
 * UEFI, where there is no VGA text mode -- mirroring the console as vga.c does on a BIOS. 8x16 cells from
 * font8x16.c, light grey on black, an underline cursor. It runs under the console lock with interrupts off,
 * so it keeps its work per line bounded: when the text reaches the bottom the lower half of the screen moves
 * up in one copy (one copy every rows/2 lines instead of a full-screen copy on every line). */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/font8x16.h"
#include "kernel/format.h"
#include "kernel/string.h"

/* Enough cells for 3840x2160; a larger framebuffer is used up to this size. */
#define FB_MAX_COLS 480
#define FB_MAX_ROWS 135

static struct {
    uint8_t *base;        /* identity-mapped: the framebuffer lies below 4 GiB (checked) */
    uint32_t pitch;       /* bytes per pixel row */
    uint32_t cols, rows;  /* text cells */
    uint32_t fg, bg;      /* pixel values in the framebuffer's own channel layout */
    uint32_t row, col;    /* the cursor */
} fb;
static char shadow[FB_MAX_ROWS][FB_MAX_COLS]; /* what each cell shows, to redraw it when the cursor leaves */

/* Full intensity for a channel of `size` bits at `pos`, times num/den. */
static uint32_t channel(uint8_t pos, uint8_t size, uint32_t num, uint32_t den)
{
    if (size == 0 || size > 8 || pos + size > 32)
        return 0;
    return ((((1u << size) - 1) * num / den) << pos);
}

static void draw_cell(uint32_t r, uint32_t c, bool cursor)
{
    char ch = shadow[r][c];
    unsigned glyph = (unsigned char)ch - FONT_FIRST;
    const uint8_t *bits = glyph < FONT_GLYPHS ? font8x16[glyph] : font8x16[0];
    for (uint32_t y = 0; y < FONT_HEIGHT; y++) {
        volatile uint32_t *px = (volatile uint32_t *)(fb.base + (r * FONT_HEIGHT + y) * fb.pitch) + c * FONT_WIDTH;
        uint8_t line = bits[y];
        if (cursor && y >= FONT_HEIGHT - 2)
            line = 0xFF;
        for (uint32_t x = 0; x < FONT_WIDTH; x++)
            px[x] = (line & (0x80 >> x)) ? fb.fg : fb.bg;
    }
}

static void clear_rows(uint32_t first, uint32_t count)
{
    for (uint32_t r = first; r < first + count; r++)
        memset(shadow[r], ' ', fb.cols);
    for (uint32_t y = first * FONT_HEIGHT; y < (first + count) * FONT_HEIGHT; y++) {
        volatile uint32_t *px = (volatile uint32_t *)(fb.base + y * fb.pitch);
        for (uint32_t x = 0; x < fb.cols * FONT_WIDTH; x++)
            px[x] = fb.bg;
    }
}

bool fbcon_init(char *why, size_t size)
{
    const struct boot_fb *f = &boot_info.fb;
    if (f->type != BOOT_FB_RGB || f->bpp != 32) {
        ksnprintf(why, size, "%u bpp %s framebuffer: only 32 bpp RGB is drawn", f->bpp,
                  f->type == BOOT_FB_RGB ? "RGB" : "indexed");
        return false;
    }
    if (f->addr + (uint64_t)f->pitch * f->height > 0x100000000ull) {
        ksnprintf(why, size, "framebuffer at 0x%llx is beyond the 4 GiB identity map",
                  (unsigned long long)f->addr);
        return false;
    }
    if (f->width / FONT_WIDTH < 20 || f->height / FONT_HEIGHT < 4 || f->pitch < f->width * 4) {
        ksnprintf(why, size, "framebuffer %ux%u (pitch %u) is too small for text", f->width, f->height, f->pitch);
        return false;
    }
    fb.base = (uint8_t *)(uintptr_t)f->addr;
    fb.pitch = f->pitch;
    fb.cols = f->width / FONT_WIDTH < FB_MAX_COLS ? f->width / FONT_WIDTH : FB_MAX_COLS;
    fb.rows = f->height / FONT_HEIGHT < FB_MAX_ROWS ? f->height / FONT_HEIGHT : FB_MAX_ROWS;
    memset(shadow, ' ', sizeof shadow);
    fb.fg = channel(f->red_pos, f->red_size, 2, 3) | channel(f->green_pos, f->green_size, 2, 3) |
            channel(f->blue_pos, f->blue_size, 2, 3);
    fb.bg = 0;
    fb.row = fb.col = 0;
    /* The whole screen, not only the text area: the firmware and GRUB drew on it. */
    for (uint32_t y = 0; y < f->height; y++) {
        volatile uint32_t *px = (volatile uint32_t *)(fb.base + y * fb.pitch);
        for (uint32_t x = 0; x < f->width; x++)
            px[x] = fb.bg;
    }
    draw_cell(0, 0, true);
    return true;
}

void fbcon_size(uint32_t *cols, uint32_t *rows)
{
    *cols = fb.cols;
    *rows = fb.rows;
}

static void newline(void)
{
    fb.col = 0;
    if (++fb.row < fb.rows)
        return;
    /* Bottom reached: the lower half moves to the top, the rest is cleared. */
    uint32_t keep = fb.rows / 2;
    uint32_t from = fb.rows - keep;
    memmove(fb.base, fb.base + from * FONT_HEIGHT * fb.pitch, (size_t)keep * FONT_HEIGHT * fb.pitch);
    memmove(shadow, shadow[from], sizeof shadow[0] * keep);
    clear_rows(keep, fb.rows - keep);
    fb.row = keep;
}

void fbcon_write(const char *text, size_t len)
{
    draw_cell(fb.row, fb.col, false); /* lift the cursor */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n') {
            newline();
        } else if (c == '\r') {
            fb.col = 0;
        } else if (c == '\b') {
            if (fb.col > 0)
                fb.col--;
        } else if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7F) {
            shadow[fb.row][fb.col] = c;
            draw_cell(fb.row, fb.col, false);
            if (++fb.col == fb.cols)
                newline();
        }
    }
    draw_cell(fb.row, fb.col, true);
}
