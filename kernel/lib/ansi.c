/* kernel/lib/ansi.c: the console screens' parser of terminal control sequences (kernel/lib/ansi.h). Only CSI
 * sequences (ESC '[' parameters final) are understood, and of those only H, J and K act; every other one is
 * swallowed whole, so no byte of a sequence reaches the screen as text. A lone ESC followed by anything but '['
 * is swallowed with that byte (ESC 7, ESC c: nothing the kernel sends). */
#include "kernel/lib/ansi.h"


#define ESC 0x1b

enum { TEXT, AFTER_ESC, IN_CSI };

void ansi_init(struct ansi_parser *p)
{
    p->state = TEXT;
    p->nparams = 0;
    p->params[0] = p->params[1] = 0;
}

/* The parameter at i, 0 when absent (a sequence's defaults are 0 or 1 as its letter says). */
static unsigned param(const struct ansi_parser *p, unsigned i)
{
    return i < p->nparams && i < 2 ? p->params[i] : 0;
}

static enum ansi_action final_byte(struct ansi_parser *p, char c, unsigned *row, unsigned *col)
{
    switch (c) {
    case 'H':
    case 'f': {
        /* 1-based on the wire, absent or 0 meaning 1 */
        unsigned r = param(p, 0), k = param(p, 1);
        *row = r ? r - 1 : 0;
        *col = k ? k - 1 : 0;
        return ANSI_MOVE;
    }
    case 'J':
        if (param(p, 0) == 0)
            return ANSI_ERASE_BELOW;
        return param(p, 0) == 2 ? ANSI_ERASE_SCREEN : ANSI_SWALLOWED;
    case 'K':
        return param(p, 0) == 0 ? ANSI_ERASE_LINE : ANSI_SWALLOWED;
    default:
        return ANSI_SWALLOWED;
    }
}

enum ansi_action ansi_feed(struct ansi_parser *p, char c, unsigned *row, unsigned *col)
{
    unsigned char b = (unsigned char)c;
    switch (p->state) {
    case TEXT:
        if (b != ESC)
            return ANSI_TEXT;
        p->state = AFTER_ESC;
        return ANSI_SWALLOWED;
    case AFTER_ESC:
        if (b == '[') {
            p->state = IN_CSI;
            p->nparams = 0;
            p->params[0] = p->params[1] = 0;
        } else {
            p->state = TEXT;
        }
        return ANSI_SWALLOWED;
    default:
        break;
    }
    /* In a CSI: digits and ';' build parameters (each capped, so a long run of digits cannot wrap), any other
     * byte from '@' to '~' ends it; anything else (a private marker such as '?') is taken and ignored. */
    if (b >= '0' && b <= '9') {
        if (p->nparams == 0)
            p->nparams = 1;
        if (p->nparams <= 2) {
            uint16_t *v = &p->params[p->nparams - 1];
            *v = *v >= 1000 ? 1000 : (uint16_t)(*v * 10 + (b - '0'));
        }
        return ANSI_SWALLOWED;
    }
    if (b == ';') {
        if (p->nparams == 0)
            p->nparams = 1;
        if (p->nparams < 255)
            p->nparams++;
        return ANSI_SWALLOWED;
    }
    if (b >= 0x40 && b <= 0x7e) {
        p->state = TEXT;
        return final_byte(p, c, row, col);
    }
    if (b < 0x20 || b > 0x7e)
        p->state = TEXT; /* a control byte or garbage inside a sequence ends it: never stay stuck swallowing */
    return ANSI_SWALLOWED;
}
