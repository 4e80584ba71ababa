/* kernel/lib/ansi.h: the few terminal control sequences the console's own screens (VGA text, the framebuffer)
 * act on -- cursor home or position (ESC [ row ; col H), erase below (ESC [ J, ESC [ 2 J) and erase to the end of
 * the line (ESC [ K) -- parsed one byte at a time (kernel/lib/ansi.c). The serial console passes every byte to the
 * terminal, which understands these and more; the screens must at least not print a sequence as text, or a
 * redraw (`profile top`, a log line above the prompt) leaves "[H[J" behind. Any other CSI sequence is swallowed.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers. */
#ifndef KERNEL_LIB_ANSI_H
#define KERNEL_LIB_ANSI_H

#include <stdint.h>

enum ansi_action {
    ANSI_TEXT,         /* an ordinary byte: the screen handles it as before */
    ANSI_SWALLOWED,    /* part of a sequence, or one the screen does not act on */
    ANSI_MOVE,         /* cursor to (row, col), 0-based (ESC [ H is 0, 0) */
    ANSI_ERASE_BELOW,  /* from the cursor to the end of the screen (ESC [ J, ESC [ 0 J) */
    ANSI_ERASE_SCREEN, /* the whole screen, the cursor stays (ESC [ 2 J) */
    ANSI_ERASE_LINE,   /* from the cursor to the end of its line (ESC [ K, ESC [ 0 K) */
};

struct ansi_parser {
    uint8_t state;       /* 0 text, 1 after ESC, 2 in a CSI's parameters */
    uint8_t nparams;     /* parameters begun (at most 2 are kept) */
    uint16_t params[2];
};

void ansi_init(struct ansi_parser *p);
/* One byte. For ANSI_MOVE, *row and *col are where the cursor goes (unclamped: the screen clamps). */
enum ansi_action ansi_feed(struct ansi_parser *p, char c, unsigned *row, unsigned *col);

#endif
