/* tests/fuzz/fuzz_udpsh.c: the UDP shell's wire protocol (kernel/udpsh/wire.c). A request datagram of
 * arbitrary bytes is refused with exactly the refusal docs/udp-shell.md names, or copied whole, printable and
 * NUL-terminated, into a line buffer of exactly UDPSH_LINE_MAX + 1 bytes. The same bytes, written as a
 * command's output in pieces, come out as datagrams of at most UDPSH_DATAGRAM_MAX bytes cut at line ends and
 * as full as they may be, whose concatenation is the output, followed by exactly the trailer: counts and a
 * CRC-32 checked against a bitwise reference here. The same bytes as a request to the token and key layer
 * (kernel/udpsh/auth.c): the prefix parser reads only what the grammar allows and points inside the
 * datagram; a token reply always keeps to the 3x budget; nothing runs without the right token, and with a key
 * nothing runs without the right MAC; and the bytes with a good token (and MAC) put in front run as exactly the
 * bytes, or, longer than a line, are refused by their length before any MAC. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/lib/hmac.h"
#include "kernel/udpsh/auth.h"
#include "kernel/udpsh/wire.h"

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

static bool hex_lower(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return false;
    return true;
}

static bool is_command(const char *name)
{
    return strcmp(name, "poweroff") == 0 || strcmp(name, "help") == 0 || strcmp(name, "netload") == 0;
}

static void check_auth(const uint8_t *data, size_t size)
{
    static struct udpsh_auth auth;
    static struct udpsh_judgement j;
    uint8_t secret[32] = { 1, 2, 3 }, key[16] = { 9, 8, 7 };
    bool keyed = size > 0 && data[0] & 1;
    udpsh_auth_init(&auth, secret, keyed ? key : NULL, sizeof key);
    uint32_t ip = 0x0a000242;
    uint16_t port = 4242;
    int64_t now = 7 * UDPSH_TOKEN_WINDOW_NS + 3;

    struct udpsh_request_prefix p;
    if (udpsh_prefix_parse(data, size, &p)) {
        CHECK(p.line_at <= size);
        if (p.has_token) {
            CHECK(size >= 6 + UDPSH_TOKEN_HEX && memcmp(data, "token=", 6) == 0 &&
                  hex_lower(data + 6, UDPSH_TOKEN_HEX));
            if (p.has_mac)
                CHECK(p.counter_at + p.counter_len <= p.line_at && p.counter_len >= 1 && p.counter_len <= 20);
        } else {
            CHECK(p.line_at == 0 && !(size >= 6 && memcmp(data, "token=", 6) == 0));
        }
    }

    /* As it came: the fuzzer cannot guess a token, so it earns one (within budget) or nothing. */
    udpsh_auth_judge(&auth, ip, port, data, size, now, NULL, &j);
    if (j.verdict == UDPSH_REPLY && j.reply == j.token_reply)
        CHECK(net_reply_within_budget(size, j.reply_len) && j.reply_len == UDPSH_TOKEN_REPLY_LEN);
    if (j.verdict == UDPSH_DROP)
        CHECK(udpsh_looks_like_reply(data, size));
    CHECK(j.verdict != UDPSH_RUN);

    /* With the good token (and, keyed, a good MAC) in front, the bytes run as themselves. */
    static uint8_t request[65536 + 256];
    if (size > 65536)
        return;
    uint8_t token[UDPSH_TOKEN_BYTES];
    udpsh_token(&auth, ip, port, now / UDPSH_TOKEN_WINDOW_NS, token);
    char tok[UDPSH_TOKEN_HEX + 1];
    for (int i = 0; i < UDPSH_TOKEN_BYTES; i++)
        snprintf(tok + 2 * i, 3, "%02x", token[i]);
    int n;
    if (keyed) {
        unsigned long long counter = 1 + (size > 1 ? data[1] : 0);
        char ctr[24];
        snprintf(ctr, sizeof ctr, "%llu", counter);
        struct hmac_sha256 h;
        uint8_t mac[32];
        hmac_sha256_init(&h, key, sizeof key);
        hmac_sha256_update(&h, tok, UDPSH_TOKEN_HEX);
        hmac_sha256_update(&h, " ", 1);
        hmac_sha256_update(&h, ctr, strlen(ctr));
        hmac_sha256_update(&h, " ", 1);
        hmac_sha256_update(&h, data, size);
        hmac_sha256_final(&h, mac);
        n = snprintf((char *)request, 256, "token=%s counter=%s mac=", tok, ctr);
        for (int i = 0; i < 32; i++)
            n += snprintf((char *)request + n, 3, "%02x", mac[i]);
        request[n++] = ' ';
    } else {
        n = snprintf((char *)request, 256, "token=%s ", tok);
    }
    memcpy(request + n, data, size);
    udpsh_auth_judge(&auth, ip, port, request, (size_t)n + size, now, NULL, &j);
    if (size > UDPSH_LINE_MAX + 2) {
        /* refused by its length, before any MAC is computed over it */
        CHECK(j.verdict == UDPSH_REPLY && strcmp(j.reply, UDPSH_REPLY_TOO_LONG) == 0);
        return;
    }
    /* bytes that begin like the fields after the token are taken as those fields */
    bool field = (size >= 3 && memcmp(data, "id=", 3) == 0) || (size >= 8 && memcmp(data, "counter=", 8) == 0);
    if (!keyed && field)
        return;
    CHECK(j.verdict == UDPSH_RUN && j.keyed == keyed);
    CHECK(j.line == request + n && j.line_len == size);
    /* a flipped byte in the token (or the MAC) makes it a stranger again */
    request[6 + (size % UDPSH_TOKEN_HEX)] ^= 0x01;
    udpsh_auth_judge(&auth, ip, port, request, (size_t)n + size, now, NULL, &j);
    CHECK(j.verdict != UDPSH_RUN);

    char *line = malloc(UDPSH_LINE_MAX + 1);
    if (!udpsh_request_line(data, size, line)) {
        bool allowed = udpsh_unkeyed_allows(line, ip, is_command);
        if (strncmp(line, "poweroff", 8) == 0 && (line[8] == 0 || line[8] == ' ' || line[8] == '\t'))
            CHECK(!allowed);
    }
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_request(data, size);
    check_chunker(data, size);
    check_auth(data, size);
    return 0;
}
