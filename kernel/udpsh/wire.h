/* kernel/udpsh/wire.h: the UDP shell's wire protocol, kept apart from the network stack so it can be
 * tested on the host. docs/udp-shell.md is the reference; in short:
 *
 *   request  one datagram holding one command line; one trailing "\n" or "\r\n" is optional.
 *   reply    the command's text output, cut into datagrams of at most UDPSH_DATAGRAM_MAX bytes (at the last
 *            newline that fits, so each datagram holds whole lines unless a single line is longer; and wherever
 *            the command flushed its sink, so a piece it wants apart -- a `profile top` frame -- is one), then
 *            exactly one final datagram, always a line of its own beginning "# udpsh ":
 *
 *     # udpsh end seq=<n> datagrams=<d> bytes=<b> crc32=<8 hex digits> status=<0|1>\n
 *
 *            seq is the server's request number, datagrams and bytes count the text datagrams and text bytes
 *            before this one, crc32 is the CRC-32 (IEEE 802.3, as zlib computes it) of all those text bytes in
 *            order, status is 0 when the command succeeded and 1 when it failed. The trailer starts with one
 *            extra "\n" when the text did not end with a newline, so under `nc -u` it is always on a line of
 *            its own; that newline is part of the trailer, not of the text.
 *   refusal  instead of running anything, a reply may be one datagram holding one of the UDPSH_REPLY_* lines
 *            ("# udpsh busy: ..." or "# udpsh error: ..."), with no trailer.
 *
 * A client has the whole reply when the trailer came and its datagram and byte counts (and the CRC) match
 * what arrived; anything less is a lost or damaged datagram. */
#ifndef KERNEL_UDPSH_WIRE_H
#define KERNEL_UDPSH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sink.h"

#define UDPSH_DEFAULT_PORT 5555
/* Text bytes in one reply datagram: well under an Ethernet MTU, so no reply datagram is ever fragmented. */
#define UDPSH_DATAGRAM_MAX 1400
/* The longest command line a request may hold, the console's limit (LINE_MAX in kernel/shell/lineedit.h). */
#define UDPSH_LINE_MAX 255
/* Room for the longest trailer: every counter at its 20-digit maximum, the leading newline, the NUL. */
#define UDPSH_TRAILER_MAX 128

/* The one-datagram refusals. Each is a single line; a client recognises every final datagram by its
 * "# udpsh " prefix. */
#define UDPSH_REPLY_BUSY "# udpsh busy: another command is running\n"
#define UDPSH_STRINGIFY_(x) #x
#define UDPSH_STRINGIFY(x) UDPSH_STRINGIFY_(x)
#define UDPSH_REPLY_TOO_LONG "# udpsh error: line too long (max " UDPSH_STRINGIFY(UDPSH_LINE_MAX) " characters)\n"
#define UDPSH_REPLY_NOT_TEXT "# udpsh error: request is not text\n"
#define UDPSH_REPLY_MULTILINE "# udpsh error: one command line per request\n"

const char *udpsh_busy_reply(void);

/* Checks one request datagram and copies its command line, NUL-terminated, into line. Drops one trailing
 * "\n" or "\r\n". Returns NULL when line holds a command to run (possibly empty: an empty line runs nothing and
 * is answered with a bare trailer), or else the UDPSH_REPLY_* line to send back instead: a line longer than
 * UDPSH_LINE_MAX, a byte that is not printable ASCII or a tab, or a newline before the end. */
const char *udpsh_request_line(const void *data, size_t len, char line[UDPSH_LINE_MAX + 1]);

/* CRC-32 as in the trailer: start with crc = 0, feed the bytes in pieces, the result is the running value
 * (udpsh_crc32(0, "123456789", 9) == 0xcbf43926). */
uint32_t udpsh_crc32(uint32_t crc, const void *data, size_t len);

/* Sends one datagram of the reply (len <= UDPSH_DATAGRAM_MAX, or a trailer). A send that fails is simply
 * lost: the trailer still counts it, which is how the client learns of it. */
typedef void (*udpsh_emit_fn)(void *arg, const char *data, size_t len);

/* Cuts a command's output into reply datagrams. Not locked: one command's output goes to one chunker. */
struct reply_chunker {
    struct sink sink; /* first member: writes to chunker_sink() land in chunker_write */
    udpsh_emit_fn emit;
    void *emit_arg;
    uint64_t seq;       /* the request number the trailer names */
    uint64_t datagrams; /* text datagrams emitted */
    uint64_t bytes;     /* text bytes written */
    uint64_t late_bytes; /* bytes written after chunker_finish, dropped */
    uint32_t crc;       /* CRC-32 of the text so far */
    bool ends_in_newline; /* the last text byte written was '\n' (false while there is none) */
    bool finished;
    size_t used;        /* bytes waiting in buf */
    char buf[UDPSH_DATAGRAM_MAX];
};

void chunker_init(struct reply_chunker *c, uint64_t seq, udpsh_emit_fn emit, void *emit_arg);
/* Appends text; each time the buffer fills, emits up to and including its last newline (all of it when it
 * holds none) and keeps the rest for the next datagram. */
void chunker_write(struct reply_chunker *c, const char *text, size_t len);
/* The chunker as an output sink, for shell_run_line; sink_flush on it sends what is held as a datagram. */
struct sink *chunker_sink(struct reply_chunker *c);
/* Emits what is left as the last text datagram, then the trailer; result is the command's return value
 * (0 is status=0, anything else status=1). Later writes and finishes are dropped (counted in late_bytes). */
void chunker_finish(struct reply_chunker *c, int result);

#endif
