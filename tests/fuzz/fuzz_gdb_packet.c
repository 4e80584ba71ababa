/* tests/fuzz/fuzz_gdb_packet.c: the gdb remote protocol's framing layer (gdbstub/packet.c) on arbitrary bytes
 * from gdb's side of the wire: noise, acks, Ctrl-C, bad and missing checksums, packets past GDB_PACKET_SIZE,
 * a link that ends anywhere. Each packet received is echoed back as binary through gdb_out_binary. Checked:
 * the payload stays within its buffer and NUL-terminated; the stub writes nothing but `+`, `-` and whole
 * frames with a right checksum and a payload within GDB_PACKET_SIZE; an echoed frame unescapes to the payload
 * it echoed. The hex helpers and the cursor's number reader run on every payload against models. */
#include <stdbool.h>
#include <string.h>

#include "kernel/lib/hex.h"
#include "fuzz.h"
#include "gdbstub/packet.h"

static struct {
    const uint8_t *data;
    size_t size, at;
} wire;

/* The stub's output, checked as it is written: outside a frame only `+`, `-` or `$`; a frame's payload is
 * kept until its checksum digits, then becomes last_frame. */
static struct {
    bool in_frame;
    int digits; /* checksum digits seen after `#`, 0 while in the payload */
    uint8_t sum;
    size_t len;
    char hi;
    char frame[GDB_PACKET_SIZE];
    char last_frame[GDB_PACKET_SIZE];
    size_t last_len;
    size_t frames;
} out;

static int wire_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    CHECK(timeout_ms == -1);
    return wire.at < wire.size ? wire.data[wire.at++] : -1;
}

static void wire_putc(void *ctx, char c)
{
    (void)ctx;
    if (!out.in_frame) {
        CHECK(c == '+' || c == '-' || c == '$');
        if (c == '$') {
            out.in_frame = true;
            out.digits = 0;
            out.sum = 0;
            out.len = 0;
        }
        return;
    }
    if (out.digits == 0 && c != '#') {
        CHECK(c != '$' && out.len < GDB_PACKET_SIZE);
        out.frame[out.len++] = c;
        out.sum = (uint8_t)(out.sum + (uint8_t)c);
        return;
    }
    if (c == '#' && out.digits == 0) {
        out.digits = 1;
        return;
    }
    CHECK(hex_value(c) >= 0 && c == hex_lower((unsigned)hex_value(c))); /* lower-case hex */
    if (out.digits == 1) {
        out.hi = c;
        out.digits = 2;
        return;
    }
    CHECK((uint8_t)(hex_value(out.hi) << 4 | hex_value(c)) == out.sum);
    memcpy(out.last_frame, out.frame, out.len);
    out.last_len = out.len;
    out.frames++;
    out.in_frame = false;
}

static const struct gdb_transport transport = { .getc = wire_getc, .putc = wire_putc, .ctx = NULL };

static void check_hex_helpers(const char *payload, size_t len)
{
    static uint8_t bytes[GDB_PACKET_SIZE];
    static char text[2 * GDB_PACKET_SIZE];
    size_t n = len / 2;
    bool all_hex = true;
    for (size_t i = 0; i < 2 * n; i++)
        all_hex &= hex_value(payload[i]) >= 0;
    CHECK(hex_decode(bytes, payload, n) == all_hex);
    if (all_hex) {
        CHECK(hex_encode(text, bytes, n) == 2 * n);
        for (size_t i = 0; i < 2 * n; i++)
            CHECK(hex_value(text[i]) == hex_value(payload[i]));
        /* widened in place gives the same digits */
        memcpy(text, bytes, n);
        hex_expand_in_place(text, n);
        for (size_t i = 0; i < 2 * n; i++)
            CHECK(hex_value(text[i]) == hex_value(payload[i]));
    }

    /* cursor_hex: the run of hex digits at the start, leading zeros allowed, at most 64 significant bits. */
    struct gdb_cursor c = { payload, payload + len };
    uint64_t value = 0;
    size_t digits = 0, significant = 0;
    uint64_t want = 0;
    while (digits < len && hex_value(payload[digits]) >= 0) {
        want = want << 4 | (uint64_t)hex_value(payload[digits]);
        if (significant > 0 || hex_value(payload[digits]) != 0)
            significant++;
        digits++;
    }
    bool ok = cursor_hex(&c, &value);
    CHECK(ok == (digits > 0 && significant <= 16));
    if (ok)
        CHECK(value == want && c.p == payload + digits);
    else
        CHECK(c.p == payload);
    CHECK(cursor_left(&c) == len - (size_t)(c.p - payload));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct gdb_link link;
    wire.data = data;
    wire.size = size;
    wire.at = 0;
    memset(&out, 0, sizeof out);
    memset(&link, 0x5a, sizeof link);
    gdb_link_init(&link, &transport);

    for (;;) {
        enum gdb_event ev = gdb_link_receive(&link);
        if (ev == GDB_EVENT_LOST)
            break;
        CHECK(!out.in_frame);
        if (ev == GDB_EVENT_INTERRUPT)
            continue;
        CHECK(ev == GDB_EVENT_PACKET || ev == GDB_EVENT_TOO_LONG);
        CHECK(link.in_len <= GDB_PACKET_SIZE && link.in[link.in_len] == '\0');
        if (ev == GDB_EVENT_TOO_LONG)
            CHECK(link.in_len == 0);
        check_hex_helpers(link.in, link.in_len);

        /* The echo: the payload as binary, then ";" and its length when there is room. */
        gdb_out_reset(&link);
        size_t took = gdb_out_binary(&link, link.in, link.in_len);
        CHECK(took <= link.in_len && link.out_len <= GDB_PACKET_SIZE && !link.out_overflow);
        CHECK(took == link.in_len || gdb_out_room(&link) < 2);
        gdb_out_char(&link, ';');
        gdb_out_hex_u64(&link, took);
        bool overflow = link.out_overflow;
        size_t frames = out.frames;
        bool held = gdb_link_send(&link);
        CHECK(out.frames > frames && !out.in_frame);
        if (overflow) {
            CHECK(out.last_len == 3 && memcmp(out.last_frame, "E07", 3) == 0);
        } else {
            /* Unescaped, the frame is the payload it echoed and then ";<took in hex>". */
            size_t r = 0, k = 0;
            for (; r < out.last_len && k < took; k++) {
                char ch = out.last_frame[r++];
                if (ch == '}') {
                    CHECK(r < out.last_len);
                    ch = (char)(out.last_frame[r++] ^ 0x20);
                } else {
                    CHECK(ch != '$' && ch != '#' && ch != '*');
                }
                CHECK(ch == link.in[k]);
            }
            CHECK(k == took && r < out.last_len && out.last_frame[r] == ';');
        }
        if (!held)
            break;
    }
    CHECK(wire.at == wire.size); /* the link is lost only when the bytes are used up */
    return 0;
}
