/* kernel/udpsh/wire.c: the UDP shell's wire protocol (kernel/udpsh/wire.h) -- checking a request
 * datagram, cutting a command's output into reply datagrams at line ends, and the trailer that tells a client
 * the reply is complete. Pure: datagrams leave through the caller's emit callback. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/format.h"
#include "kernel/shell/lineedit.h"
#include "kernel/udpsh/wire.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

_Static_assert(UDPSH_LINE_MAX == LINE_MAX, "a UDP request holds what the console accepts");

const char *udpsh_busy_reply(void)
{
    return UDPSH_REPLY_BUSY;
}

const char *udpsh_request_line(const void *data, size_t len, char line[UDPSH_LINE_MAX + 1])
{
    const unsigned char *bytes = data;
    if (len > 0 && bytes[len - 1] == '\n') {
        len--;
        if (len > 0 && bytes[len - 1] == '\r')
            len--;
    }
    /* Length first: a 64 KiB datagram is refused without reading it all. */
    if (len > UDPSH_LINE_MAX)
        return UDPSH_REPLY_TOO_LONG;
    bool multiline = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = bytes[i];
        if (c == '\n' || c == '\r')
            multiline = true;
        else if (c != '\t' && (c < 0x20 || c > 0x7e))
            return UDPSH_REPLY_NOT_TEXT;
    }
    if (multiline)
        return UDPSH_REPLY_MULTILINE;
    memcpy(line, bytes, len);
    line[len] = '\0';
    return NULL;
}

/* The reflected IEEE polynomial 0xedb88320 applied to each value of a nibble: two lookups per byte. */
static const uint32_t crc32_nibble[16] = {
    0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
    0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

uint32_t udpsh_crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ crc32_nibble[crc & 0xf];
        crc = (crc >> 4) ^ crc32_nibble[crc & 0xf];
    }
    return ~crc;
}

static void chunker_sink_write(struct sink *sink, const char *text, size_t len)
{
    /* sink is the first member of struct reply_chunker, so the cast recovers the whole. */
    chunker_write((struct reply_chunker *)sink, text, len);
}

static void chunker_emit(struct reply_chunker *c, size_t len);

/* What is held goes out now as a datagram of its own: a command that wants its pieces apart (`profile top`, an
 * interval each) flushes after each. */
static void chunker_sink_flush(struct sink *sink)
{
    struct reply_chunker *c = (struct reply_chunker *)sink;
    if (c->finished || c->used == 0)
        return;
    chunker_emit(c, c->used);
    c->used = 0;
}

void chunker_init(struct reply_chunker *c, uint64_t seq, udpsh_emit_fn emit, void *emit_arg)
{
    c->sink.write = chunker_sink_write;
    c->sink.flush = chunker_sink_flush;
    c->emit = emit;
    c->emit_arg = emit_arg;
    c->seq = seq;
    c->datagrams = 0;
    c->bytes = 0;
    c->late_bytes = 0;
    c->crc = 0;
    c->ends_in_newline = false;
    c->finished = false;
    c->used = 0;
}

struct sink *chunker_sink(struct reply_chunker *c)
{
    return &c->sink;
}

static void chunker_emit(struct reply_chunker *c, size_t len)
{
    c->emit(c->emit_arg, c->buf, len);
    c->datagrams++;
}

/* The buffer is full: send through its last newline, or all of it when one line fills it. */
static void chunker_cut(struct reply_chunker *c)
{
    size_t cut = c->used;
    for (size_t i = c->used; i > 0; i--) {
        if (c->buf[i - 1] == '\n') {
            cut = i;
            break;
        }
    }
    chunker_emit(c, cut);
    memmove(c->buf, c->buf + cut, c->used - cut);
    c->used -= cut;
}

void chunker_write(struct reply_chunker *c, const char *text, size_t len)
{
    if (c->finished) {
        c->late_bytes += len;
        return;
    }
    if (len == 0)
        return;
    c->bytes += len;
    c->crc = udpsh_crc32(c->crc, text, len);
    c->ends_in_newline = text[len - 1] == '\n';
    while (len > 0) {
        if (c->used == UDPSH_DATAGRAM_MAX)
            chunker_cut(c);
        size_t room = UDPSH_DATAGRAM_MAX - c->used;
        size_t piece = len < room ? len : room;
        memcpy(c->buf + c->used, text, piece);
        c->used += piece;
        text += piece;
        len -= piece;
    }
    /* A full buffer waits for the next write or the finish: cutting it now could split a line whose newline
     * is the next byte written. */
}

void chunker_finish(struct reply_chunker *c, int result)
{
    if (c->finished)
        return;
    c->finished = true;
    if (c->used > 0)
        chunker_emit(c, c->used);
    c->used = 0;

    char trailer[UDPSH_TRAILER_MAX];
    bool newline_first = c->bytes > 0 && !c->ends_in_newline;
    size_t len = ksnprintf(trailer, sizeof trailer,
                           "%s# udpsh end seq=%llu datagrams=%llu bytes=%llu crc32=%08x status=%d\n",
                           newline_first ? "\n" : "", (unsigned long long)c->seq,
                           (unsigned long long)c->datagrams, (unsigned long long)c->bytes, (unsigned)c->crc,
                           result == 0 ? 0 : 1);
    c->emit(c->emit_arg, trailer, len);
}
