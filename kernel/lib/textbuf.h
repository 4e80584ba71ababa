/* kernel/lib/textbuf.h: the bounded text cursor the kernel's fixed-buffer writers share -- kvsnprintf's buffer
 * (format.c), buffer_sink (sink.c) and the raw format's line writer (kernel/profiler/raw.c); the hex digits
 * they print with are kernel/lib/hex.h. A textbuf fills a caller's buffer of cap bytes from the front and keeps it
 * NUL-terminated whenever cap > 0; what does not fit is refused and reported, never written past the end.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_TEXTBUF_H
#define KERNEL_LIB_TEXTBUF_H

#include <stddef.h>

#include "kernel/lib/string.h"

struct textbuf {
    char *buf;
    size_t cap; /* bytes in buf, the NUL's included; 0: nothing is ever written (buf may be NULL) */
    size_t len; /* text in buf, the NUL not counted */
};

static inline void textbuf_init(struct textbuf *tb, char *buf, size_t cap)
{
    tb->buf = buf;
    tb->cap = cap;
    tb->len = 0;
    if (cap > 0)
        buf[0] = '\0';
}

/* How many more bytes of text fit (one byte is always kept for the NUL). */
static inline size_t textbuf_room(const struct textbuf *tb) { return tb->cap > 0 ? tb->cap - 1 - tb->len : 0; }

/* Appends what fits of text[0..n); returns how many bytes did not fit (0 when all of it did). */
static inline size_t textbuf_append(struct textbuf *tb, const char *text, size_t n)
{
    size_t room = textbuf_room(tb);
    size_t copy = n < room ? n : room;
    if (copy > 0) {
        memcpy(tb->buf + tb->len, text, copy);
        tb->len += copy;
        tb->buf[tb->len] = '\0';
    }
    return n - copy;
}

#endif
