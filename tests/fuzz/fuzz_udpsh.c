/* tests/fuzz/fuzz_udpsh.c: the UDP shell's wire protocol (kernel/net/udpsh_proto.c). A request datagram of
 * arbitrary bytes is refused with exactly the refusal docs/udp-shell.md names, or copied whole, printable and
 * NUL-terminated, into a line buffer of exactly UDPSH_LINE_MAX + 1 bytes. The same bytes, written as a
 * command's output in pieces, come out as datagrams of at most UDPSH_DATAGRAM_MAX bytes cut at line ends and
 * as full as they may be, whose concatenation is the output, followed by exactly the trailer: counts and a
 * CRC-32 checked against a bitwise reference here. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/net/udpsh_proto.h"

static void check_request(const uint8_t *data, size_t size)
{
    /* The line buffer on the heap at its exact size, so a write past it is caught. */
    char *line = malloc(UDPSH_LINE_MAX + 1);
    memset(line, 0x5a, UDPSH_LINE_MAX + 1);
    const char *refusal = udpsh_request_line(data, size, line);

    size_t len = size;
    if (len > 0 && data[len - 1] == '\n') {
        len--;
        if (len > 0 && data[len - 1] == '\r')
            len--;
    }
    const char *want = NULL;
    bool multiline = false;
    for (size_t i = 0; i < len && !want; i++) {
        if (data[i] == '\n' || data[i] == '\r')
            multiline = true;
        else if (data[i] != '\t' && (data[i] < 0x20 || data[i] > 0x7e))
            want = UDPSH_REPLY_NOT_TEXT;
    }
    if (len > UDPSH_LINE_MAX)
        want = UDPSH_REPLY_TOO_LONG;
    else if (!want && multiline)
        want = UDPSH_REPLY_MULTILINE;

    if (want) {
        CHECK(refusal != NULL && strcmp(refusal, want) == 0);
    } else {
        CHECK(refusal == NULL);
        CHECK(strlen(line) == len && memcmp(line, data, len) == 0);
    }
    free(line);
}

static uint32_t reference_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int bit = 0; bit < 8; bit++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

#define MAX_OUTPUT (4 * 8192)

static struct {
    char data[MAX_OUTPUT + 2 * UDPSH_TRAILER_MAX];
    size_t len;
    size_t lens[MAX_OUTPUT];
    size_t count;
} emitted;

static void emit(void *arg, const char *data, size_t len)
{
    (void)arg;
    CHECK(emitted.count < MAX_OUTPUT && emitted.len + len <= sizeof emitted.data);
    memcpy(emitted.data + emitted.len, data, len);
    emitted.len += len;
    emitted.lens[emitted.count++] = len;
}

static void check_chunker(const uint8_t *data, size_t size)
{
    static char text[MAX_OUTPUT];
    static struct reply_chunker chunker;
    /* The output: the input repeated, so that it spans several datagrams, written in pieces whose sizes the
     * input picks. */
    unsigned repeat = size > 0 ? 1 + data[0] % 4 : 1;
    size_t total = 0;
    for (unsigned r = 0; r < repeat && total + size <= sizeof text; r++, total += size)
        memcpy(text + total, data, size);

    emitted.len = emitted.count = 0;
    uint64_t seq = size > 1 ? data[1] * 1000003ull : 7;
    int result = size > 2 ? data[2] % 3 - 1 : 0;
    chunker_init(&chunker, seq, emit, NULL);
    size_t at = 0, k = 0;
    while (at < total) {
        size_t piece = size > 0 ? 1 + (size_t)data[k++ % size] * 7 : 1;
        if (piece > total - at)
            piece = total - at;
        chunker_write(&chunker, text + at, piece);
        at += piece;
    }
    chunker_write(&chunker, text, 0);
    chunker_finish(&chunker, result);
    sink_write(chunker_sink(&chunker), "late", 4);
    chunker_finish(&chunker, 1);
    CHECK(chunker.late_bytes == 4);

    /* Text datagrams, then one trailer. */
    CHECK(emitted.count >= 1);
    size_t ntext = emitted.count - 1, text_len = emitted.len - emitted.lens[ntext];
    CHECK(text_len == total && memcmp(emitted.data, text, total) == 0);
    size_t off = 0;
    for (size_t i = 0; i < ntext; i++) {
        size_t n = emitted.lens[i];
        CHECK(n >= 1 && n <= UDPSH_DATAGRAM_MAX);
        const char *d = emitted.data + off;
        if (i + 1 < ntext) {
            /* Cut at the last newline of a full buffer, or a whole buffer holding none; and only when full. */
            CHECK(d[n - 1] == '\n' || (n == UDPSH_DATAGRAM_MAX && !memchr(d, '\n', n)));
            CHECK(n + emitted.lens[i + 1] > UDPSH_DATAGRAM_MAX);
            if (d[n - 1] == '\n')
                CHECK(!memchr(d + n, '\n', UDPSH_DATAGRAM_MAX - n));
        }
        off += n;
    }

    char want[UDPSH_TRAILER_MAX];
    bool newline_first = total > 0 && text[total - 1] != '\n';
    int n = snprintf(want, sizeof want, "%s# udpsh end seq=%llu datagrams=%zu bytes=%zu crc32=%08x status=%d\n",
                     newline_first ? "\n" : "", (unsigned long long)seq, ntext, total,
                     (unsigned)reference_crc32(0, (const uint8_t *)text, total), result == 0 ? 0 : 1);
    CHECK(n > 0 && (size_t)n < sizeof want);
    CHECK(emitted.lens[ntext] == (size_t)n && memcmp(emitted.data + text_len, want, (size_t)n) == 0);
    CHECK(udpsh_crc32(0, text, total) == reference_crc32(0, (const uint8_t *)text, total));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_request(data, size);
    check_chunker(data, size);
    return 0;
}
