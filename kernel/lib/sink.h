/* kernel/lib/sink.h: an output sink is where a command writes -- the console, or a UDP reply. Every shell command
 * is written once against a sink, so the console and the UDP shell run the same code.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_SINK_H
#define KERNEL_LIB_SINK_H

#include <stdarg.h>
#include <stddef.h>

struct sink {
    void (*write)(struct sink *sink, const char *text, size_t len);
    /* Hands on now what the sink holds back, and ends a piece there: a UDP reply sends its datagram, so what
     * was written so far arrives as one (`profile top` sends each interval so). NULL: nothing is held back. */
    void (*flush)(struct sink *sink);
};

static inline void sink_write(struct sink *sink, const char *text, size_t len)
{
    sink->write(sink, text, len);
}

static inline void sink_flush(struct sink *sink)
{
    if (sink->flush)
        sink->flush(sink);
}

void sink_puts(struct sink *sink, const char *text);
void sink_printf(struct sink *sink, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sink_vprintf(struct sink *sink, const char *fmt, va_list ap);

/* A sink that appends to a fixed buffer, always NUL-terminated; what does not fit is counted, not written. */
struct buffer_sink {
    struct sink sink;
    char *buf;
    size_t cap;       /* bytes in buf, including room for the NUL */
    size_t len;       /* bytes written, excluding the NUL */
    size_t truncated; /* bytes that did not fit */
};
void buffer_sink_init(struct buffer_sink *bs, char *buf, size_t cap);

/* A sink that writes everything to two others, first then second. */
struct tee_sink {
    struct sink sink;
    struct sink *first, *second;
};
void tee_sink_init(struct tee_sink *tee, struct sink *first, struct sink *second);

/* A sink that hands its target whole lines, each in one write: a line printed in pieces (a sink_printf, then
 * the rest) reaches a shared console at once, so another task's log line can only land between lines, never
 * inside one. A line longer than LINE_SINK_MAX goes on in LINE_SINK_MAX pieces; line_sink_flush hands on
 * what is held of an unfinished line; sink_flush on it does that and then flushes its target. */
#define LINE_SINK_MAX 256
struct line_sink {
    struct sink sink;
    struct sink *target;
    size_t used;
    char line[LINE_SINK_MAX];
};
void line_sink_init(struct line_sink *ls, struct sink *target);
void line_sink_flush(struct line_sink *ls);

#endif
