/* kernel/lib/sink.c: the out-of-line parts of output sinks (kernel/lib/sink.h) -- sink_puts, sink_printf, which
 * streams format_v's output into the sink through a small stack buffer, buffer_sink, a sink that appends
 * to a caller's fixed buffer, and line_sink, which hands its target whole lines. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "kernel/lib/textbuf.h"

void sink_puts(struct sink *sink, const char *text)
{
    size_t len = strlen(text);
    if (len > 0)
        sink_write(sink, text, len);
}

/* format_v hands over output in many small pieces (a literal run, one sign, some padding). Collecting them
 * here keeps a console or UDP sink from seeing a write per piece; the buffer is flushed whenever it fills, so
 * output of any length arrives whole. */
#define PRINTF_CHUNK 128

struct printf_stream {
    struct sink *sink;
    size_t used;
    char chunk[PRINTF_CHUNK];
};

static void printf_stream_flush(struct printf_stream *stream)
{
    if (stream->used > 0) {
        sink_write(stream->sink, stream->chunk, stream->used);
        stream->used = 0;
    }
}

static void printf_stream_emit(void *arg, const char *text, size_t len)
{
    struct printf_stream *stream = arg;
    while (len > 0) {
        if (stream->used == PRINTF_CHUNK)
            printf_stream_flush(stream);
        size_t room = PRINTF_CHUNK - stream->used;
        size_t piece = len < room ? len : room;
        memcpy(stream->chunk + stream->used, text, piece);
        stream->used += piece;
        text += piece;
        len -= piece;
    }
}

void sink_vprintf(struct sink *sink, const char *fmt, va_list ap)
{
    struct printf_stream stream;
    stream.sink = sink;
    stream.used = 0;
    format_v(printf_stream_emit, &stream, fmt, ap);
    printf_stream_flush(&stream);
}

void sink_printf(struct sink *sink, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sink_vprintf(sink, fmt, ap);
    va_end(ap);
}

static void buffer_sink_write(struct sink *sink, const char *text, size_t len)
{
    /* sink is the first member of struct buffer_sink, so the cast recovers the whole. */
    struct buffer_sink *bs = (struct buffer_sink *)sink;
    struct textbuf tb = { bs->buf, bs->cap, bs->len }; /* a zero-capacity sink may have no buffer: it counts */
    bs->truncated += textbuf_append(&tb, text, len);
    bs->len = tb.len;
}

void buffer_sink_init(struct buffer_sink *bs, char *buf, size_t cap)
{
    bs->sink.write = buffer_sink_write;
    bs->sink.flush = 0;
    bs->buf = buf;
    bs->cap = cap;
    bs->len = 0;
    bs->truncated = 0;
    if (cap > 0)
        buf[0] = '\0';
}

static void tee_sink_write(struct sink *sink, const char *text, size_t len)
{
    struct tee_sink *tee = (struct tee_sink *)sink;
    sink_write(tee->first, text, len);
    sink_write(tee->second, text, len);
}

static void tee_sink_flush(struct sink *sink)
{
    struct tee_sink *tee = (struct tee_sink *)sink;
    sink_flush(tee->first);
    sink_flush(tee->second);
}

void tee_sink_init(struct tee_sink *tee, struct sink *first, struct sink *second)
{
    tee->sink.write = tee_sink_write;
    tee->sink.flush = tee_sink_flush;
    tee->first = first;
    tee->second = second;
}

void line_sink_flush(struct line_sink *ls)
{
    if (ls->used > 0) {
        sink_write(ls->target, ls->line, ls->used);
        ls->used = 0;
    }
}

static void line_sink_write(struct sink *sink, const char *text, size_t len)
{
    /* sink is the first member of struct line_sink. */
    struct line_sink *ls = (struct line_sink *)sink;
    while (len > 0) {
        size_t room = LINE_SINK_MAX - ls->used;
        size_t n = 0;
        while (n < len && n < room && text[n] != '\n')
            n++;
        bool line_ends = n < len && n < room; /* stopped at a newline, which goes with its line */
        if (line_ends)
            n++;
        memcpy(ls->line + ls->used, text, n);
        ls->used += n;
        text += n;
        len -= n;
        if (line_ends || ls->used == LINE_SINK_MAX)
            line_sink_flush(ls);
    }
}

static void line_sink_flush_all(struct sink *sink)
{
    struct line_sink *ls = (struct line_sink *)sink;
    line_sink_flush(ls);
    sink_flush(ls->target);
}

void line_sink_init(struct line_sink *ls, struct sink *target)
{
    ls->sink.write = line_sink_write;
    ls->sink.flush = line_sink_flush_all;
    ls->target = target;
    ls->used = 0;
}
