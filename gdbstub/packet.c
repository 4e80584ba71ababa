/* gdbstub/packet.c: gdb remote protocol framing (gdbstub/packet.h). A packet is `$`, the payload, `#` and
 * two hex digits of the payload's byte sum modulo 256. The receiver answers `+` when the checksum holds and
 * `-` when it does not, and the sender repeats a packet answered `-`. gdb never run-length encodes what it
 * sends, so a `*` arriving here is payload like any other byte; binary payloads (X) carry `}` escapes, which
 * the command that owns the payload undoes. Input is bounded by GDB_PACKET_SIZE whatever arrives: a longer
 * packet is still read to its end and checksummed, so the sender learns it was received, but its bytes
 * are dropped. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/packet.h"
#include "kernel/lib/string.h"

#define WAIT_FOREVER (-1)

static int get_byte(struct gdb_link *link)
{
    return link->transport->getc(link->transport->ctx, WAIT_FOREVER);
}

static void put_byte(struct gdb_link *link, char c)
{
    link->transport->putc(link->transport->ctx, c);
}

/* The end of an ack or a packet: a datagram transport sends what it gathered as one. */
static void flush(struct gdb_link *link)
{
    if (link->transport->flush)
        link->transport->flush(link->transport->ctx);
}

void gdb_link_init(struct gdb_link *link, const struct gdb_transport *transport)
{
    link->transport = transport;
    link->packet_started = false;
    link->in_len = 0;
    link->in[0] = '\0';
    gdb_out_reset(link);
}

/* Reads a payload after its `$` up to the checksum. Returns the event, or -1 to go back to waiting for `$`
 * (after a NAK). */
static int receive_payload(struct gdb_link *link)
{
    size_t len = 0;
    bool too_long = false;
    uint8_t sum = 0;

    for (;;) {
        int c = get_byte(link);
        if (c < 0)
            return GDB_EVENT_LOST;
        if (c == '$') {
            /* A `$` cannot be payload (it would be escaped): the packet so far was noise, a new one starts. */
            len = 0;
            too_long = false;
            sum = 0;
            continue;
        }
        if (c == '#')
            break;
        sum = (uint8_t)(sum + (uint8_t)c);
        if (len < GDB_PACKET_SIZE)
            link->in[len++] = (char)c;
        else
            too_long = true;
    }

    int digits[2];
    for (int i = 0; i < 2; i++) {
        digits[i] = get_byte(link);
        if (digits[i] < 0)
            return GDB_EVENT_LOST;
    }
    int hi = hex_value((char)digits[0]);
    int lo = hex_value((char)digits[1]);
    if (hi < 0 || lo < 0 || (uint8_t)(hi << 4 | lo) != sum) {
        put_byte(link, '-');
        flush(link);
        /* A `$` where a checksum digit belonged begins the next packet. */
        link->packet_started = digits[0] == '$' || digits[1] == '$';
        return -1;
    }

    put_byte(link, '+');
    flush(link);
    if (too_long)
        len = 0;
    link->in_len = len;
    link->in[len] = '\0';
    return too_long ? GDB_EVENT_TOO_LONG : GDB_EVENT_PACKET;
}

enum gdb_event gdb_link_receive(struct gdb_link *link)
{
    for (;;) {
        if (!link->packet_started) {
            int c = get_byte(link);
            if (c < 0)
                return GDB_EVENT_LOST;
            if (c == GDB_CTRL_C)
                return GDB_EVENT_INTERRUPT;
            if (c != '$')
                continue; /* noise, or an ack nothing waits for */
        }
        link->packet_started = false;
        int event = receive_payload(link);
        if (event >= 0)
            return (enum gdb_event)event;
    }
}

static void transmit(struct gdb_link *link)
{
    uint8_t sum = 0;
    put_byte(link, '$');
    for (size_t i = 0; i < link->out_len; i++)
        sum = (uint8_t)(sum + (uint8_t)link->out[i]);
    if (link->transport->write) {
        link->transport->write(link->transport->ctx, link->out, link->out_len);
    } else {
        for (size_t i = 0; i < link->out_len; i++)
            put_byte(link, link->out[i]);
    }
    put_byte(link, '#');
    put_byte(link, hex_lower(sum >> 4));
    put_byte(link, hex_lower(sum));
    flush(link);
}

void gdb_link_send_once(struct gdb_link *link)
{
    transmit(link);
}

bool gdb_link_send(struct gdb_link *link)
{
    if (link->out_overflow) {
        gdb_out_reset(link);
        gdb_out_str(link, "E07");
    }
    for (;;) {
        transmit(link);
        for (;;) {
            int c = get_byte(link);
            if (c < 0)
                return false;
            if (c == '+')
                return true;
            if (c == '$') {
                link->packet_started = true;
                return true;
            }
            if (c == '-')
                break;
            /* Anything else -- noise, a Ctrl-C typed while we were busy -- is not an answer. */
        }
    }
}

/* ---- building the reply ---- */

void gdb_out_reset(struct gdb_link *link)
{
    link->out_len = 0;
    link->out_overflow = false;
}

size_t gdb_out_room(const struct gdb_link *link)
{
    return sizeof link->out - link->out_len;
}

static bool out_reserve(struct gdb_link *link, size_t len)
{
    if (len > gdb_out_room(link)) {
        link->out_overflow = true;
        return false;
    }
    return true;
}

char *gdb_out_claim(struct gdb_link *link, size_t len)
{
    if (!out_reserve(link, len))
        return NULL;
    char *start = link->out + link->out_len;
    link->out_len += len;
    return start;
}

void gdb_out_char(struct gdb_link *link, char c)
{
    if (out_reserve(link, 1))
        link->out[link->out_len++] = c;
}

void gdb_out_str(struct gdb_link *link, const char *text)
{
    size_t len = strlen(text);
    if (out_reserve(link, len)) {
        memcpy(link->out + link->out_len, text, len);
        link->out_len += len;
    }
}

void gdb_out_hex_bytes(struct gdb_link *link, const void *bytes, size_t len)
{
    if (len > gdb_out_room(link) / 2) {
        link->out_overflow = true;
        return;
    }
    link->out_len += hex_encode(link->out + link->out_len, bytes, len);
}

void gdb_out_hex_u64(struct gdb_link *link, uint64_t value)
{
    char digits[16];
    size_t n = 0;
    do {
        digits[n++] = hex_lower((unsigned)(value & 15));
        value >>= 4;
    } while (value != 0);
    if (!out_reserve(link, n))
        return;
    while (n > 0)
        link->out[link->out_len++] = digits[--n];
}

static bool needs_escape(uint8_t byte)
{
    return byte == '$' || byte == '#' || byte == '}' || byte == '*';
}

size_t gdb_out_binary(struct gdb_link *link, const void *data, size_t len)
{
    const uint8_t *bytes = data;
    size_t done = 0;
    while (done < len) {
        uint8_t byte = bytes[done];
        size_t need = needs_escape(byte) ? 2 : 1;
        if (need > gdb_out_room(link))
            break;
        if (need == 2) {
            link->out[link->out_len++] = '}';
            byte ^= 0x20;
        }
        link->out[link->out_len++] = (char)byte;
        done++;
    }
    return done;
}

/* ---- hex ---- */

size_t hex_encode(char *dst, const void *bytes, size_t len)
{
    const uint8_t *src = bytes;
    for (size_t i = 0; i < len; i++) {
        dst[2 * i] = hex_lower(src[i] >> 4);
        dst[2 * i + 1] = hex_lower(src[i]);
    }
    return 2 * len;
}

void hex_expand_in_place(char *buf, size_t len)
{
    for (size_t i = len; i-- > 0;) {
        uint8_t byte = (uint8_t)buf[i];
        buf[2 * i + 1] = hex_lower(byte);
        buf[2 * i] = hex_lower(byte >> 4);
    }
}

bool hex_decode(void *dst, const char *src, size_t len)
{
    uint8_t *out = dst;
    for (size_t i = 0; i < len; i++) {
        int hi = hex_value(src[2 * i]);
        int lo = hex_value(src[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

/* ---- cursor ---- */

bool cursor_hex(struct gdb_cursor *c, uint64_t *value)
{
    const char *p = c->p;
    uint64_t v = 0;
    size_t digits = 0;
    while (p < c->end && hex_value(*p) >= 0) {
        if (v >> 60 != 0)
            return false;
        v = v << 4 | (uint64_t)hex_value(*p);
        p++;
        digits++;
    }
    if (digits == 0)
        return false;
    c->p = p;
    *value = v;
    return true;
}

bool cursor_take(struct gdb_cursor *c, char ch)
{
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

bool cursor_take_str(struct gdb_cursor *c, const char *text)
{
    size_t len = strlen(text);
    if (cursor_left(c) < len || memcmp(c->p, text, len) != 0)
        return false;
    c->p += len;
    return true;
}

bool cursor_at_end(const struct gdb_cursor *c)
{
    return c->p >= c->end;
}

size_t cursor_left(const struct gdb_cursor *c)
{
    return (size_t)(c->end - c->p);
}
