/* tests/unit/test_gdb_packet.c: gdbstub/packet.c on its own -- the hex helpers and the bounded cursor every
 * parser uses, the reply builder's refusal to write past its buffer, gdb's binary escapes, and the events
 * gdb_link_receive reports (packets with their exact bytes, oversized packets, Ctrl-C, a lost link). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/hex.h"
#include "fake_target.h"
#include "gdbstub/packet.h"
#include "unit_main.h"

static struct gdb_link link;

static int setup(void **state)
{
    (void)state;
    fake_link_reset();
    gdb_link_init(&link, &fake_transport);
    return 0;
}

static void test_hex_digits(void **state)
{
    (void)state;
    /* Every byte's value, by where it stands in the digit strings (neither holds a NUL in its 16). */
    static const char lower[16] = "0123456789abcdef", upper[16] = "0123456789ABCDEF";
    for (int c = 0; c < 256; c++) {
        const char *l = memchr(lower, c, 16), *u = memchr(upper, c, 16);
        int want = l ? (int)(l - lower) : u ? (int)(u - upper) : -1;
        assert_int_equal(hex_value((char)c), want);
    }
    for (unsigned v = 0; v < 16; v++)
        assert_int_equal(hex_value(hex_lower(v)), v);
    assert_int_equal(hex_lower(0x1f), 'f');
}

static void test_hex_encode_decode_every_byte(void **state)
{
    (void)state;
    uint8_t bytes[256], back[256];
    char hex[513];
    for (int i = 0; i < 256; i++)
        bytes[i] = (uint8_t)i;
    assert_int_equal(hex_encode(hex, bytes, 256), 512);
    assert_memory_equal(hex, "000102", 6);
    assert_memory_equal(hex + 510, "ff", 2);
    assert_true(hex_decode(back, hex, 256));
    assert_memory_equal(back, bytes, 256);

    /* In place, as M does it. */
    char buf[513];
    memcpy(buf, hex, 512);
    assert_true(hex_decode(buf, buf, 256));
    assert_memory_equal(buf, bytes, 256);

    /* Widening in place, as m does it. */
    memcpy(buf, bytes, 256);
    hex_expand_in_place(buf, 256);
    assert_memory_equal(buf, hex, 512);
    hex_expand_in_place(buf, 0);

    assert_false(hex_decode(back, "0g", 1));
    assert_false(hex_decode(back, "g0", 1));
    assert_false(hex_decode(back, "0 ", 1));
    assert_true(hex_decode(back, "AbCd", 2));
    assert_int_equal(back[0], 0xab);
    assert_int_equal(back[1], 0xcd);
}

static struct gdb_cursor cursor(const char *text)
{
    struct gdb_cursor c = { text, text + strlen(text) };
    return c;
}

static void test_cursor_hex_numbers(void **state)
{
    (void)state;
    uint64_t v = 7;
    struct gdb_cursor c = cursor("0");
    assert_true(cursor_hex(&c, &v));
    assert_int_equal(v, 0);
    assert_true(cursor_at_end(&c));

    c = cursor("ffffffffffffffff");
    assert_true(cursor_hex(&c, &v));
    assert_int_equal(v, UINT64_MAX);

    c = cursor("000000000000000000000000000001A,");
    assert_true(cursor_hex(&c, &v));
    assert_int_equal(v, 0x1a);
    assert_int_equal(cursor_left(&c), 1);
    assert_true(cursor_take(&c, ','));
    assert_true(cursor_at_end(&c));
    assert_false(cursor_take(&c, ','));

    /* Too big, no digits: refused, cursor unmoved, value untouched. */
    const char *refused[] = { "10000000000000000", "", ",1", "x", "-1" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        v = 7;
        c = cursor(refused[i]);
        assert_false(cursor_hex(&c, &v));
        assert_ptr_equal(c.p, refused[i]);
        assert_int_equal(v, 7);
    }

    /* The cursor's end is a hard stop even when more digits follow in memory. */
    const char *text = "12345";
    c = (struct gdb_cursor){ text, text + 2 };
    assert_true(cursor_hex(&c, &v));
    assert_int_equal(v, 0x12);
}

static void test_cursor_strings(void **state)
{
    (void)state;
    struct gdb_cursor c = cursor("target.xml:0,1");
    assert_false(cursor_take_str(&c, "target.xml:0,10"));
    assert_false(cursor_take_str(&c, "other"));
    assert_true(cursor_take_str(&c, "target.xml:"));
    assert_int_equal(cursor_left(&c), 3);
    assert_true(cursor_take_str(&c, ""));
    assert_true(cursor_take_str(&c, "0,1"));
    assert_true(cursor_at_end(&c));
}

static void test_reply_builder_never_overflows(void **state)
{
    (void)state;
    gdb_out_reset(&link);
    assert_int_equal(gdb_out_room(&link), GDB_PACKET_SIZE);
    char *all = gdb_out_claim(&link, GDB_PACKET_SIZE - 1);
    assert_non_null(all);
    assert_false(link.out_overflow);
    gdb_out_char(&link, 'z');
    assert_int_equal(link.out_len, GDB_PACKET_SIZE);
    assert_false(link.out_overflow);
    /* Full: each of these refuses whole and marks the overflow. */
    gdb_out_char(&link, 'y');
    assert_true(link.out_overflow);
    assert_int_equal(link.out_len, GDB_PACKET_SIZE);
    assert_null(gdb_out_claim(&link, 1));
    gdb_out_str(&link, "abc");
    gdb_out_hex_u64(&link, 0x1234);
    gdb_out_hex_bytes(&link, "ab", 2);
    assert_int_equal(gdb_out_binary(&link, "ab", 2), 0);
    assert_int_equal(link.out_len, GDB_PACKET_SIZE);

    /* A string that does not fit is not written in part. */
    gdb_out_reset(&link);
    gdb_out_claim(&link, GDB_PACKET_SIZE - 2);
    gdb_out_str(&link, "abc");
    assert_int_equal(link.out_len, GDB_PACKET_SIZE - 2);
    gdb_out_hex_bytes(&link, "a", 1);
    assert_int_equal(link.out_len, GDB_PACKET_SIZE);
    assert_memory_equal(link.out + GDB_PACKET_SIZE - 2, "61", 2);
}

static void test_hex_numbers_out(void **state)
{
    (void)state;
    gdb_out_reset(&link);
    gdb_out_hex_u64(&link, 0);
    gdb_out_char(&link, ',');
    gdb_out_hex_u64(&link, 0x4000);
    gdb_out_char(&link, ',');
    gdb_out_hex_u64(&link, UINT64_MAX);
    assert_int_equal(link.out_len, strlen("0,4000,ffffffffffffffff"));
    assert_memory_equal(link.out, "0,4000,ffffffffffffffff", link.out_len);
}

static void test_binary_escapes(void **state)
{
    (void)state;
    gdb_out_reset(&link);
    static const char data[] = "a$b#c}d*e\x00\x03";
    assert_int_equal(gdb_out_binary(&link, data, sizeof data - 1), sizeof data - 1);
    static const char want[] = "a}\x04" "b}\x03" "c}]d}\x0a" "e\x00\x03";
    assert_int_equal(link.out_len, sizeof want - 1);
    assert_memory_equal(link.out, want, sizeof want - 1);

    /* An escaped byte that would not fit whole is left for the next reply. */
    gdb_out_reset(&link);
    gdb_out_claim(&link, GDB_PACKET_SIZE - 2);
    assert_int_equal(gdb_out_binary(&link, "x#y", 3), 1);
    assert_int_equal(link.out_len, GDB_PACKET_SIZE - 1);
}

static void test_send_frames_and_overflow_becomes_an_error(void **state)
{
    (void)state;
    fake_expect_reply("OK");
    fake_send_raw("+", 1);
    fake_expect_reply("E07");
    fake_send_raw("+", 1);

    gdb_out_reset(&link);
    gdb_out_str(&link, "OK");
    assert_true(gdb_link_send(&link));
    /* A reply that did not fit is never sent cut short. */
    gdb_out_reset(&link);
    gdb_out_claim(&link, GDB_PACKET_SIZE);
    gdb_out_char(&link, '!');
    assert_true(gdb_link_send(&link));
    const char *mismatch = fake_link_finish();
    if (mismatch != NULL)
        fail_msg("%s", mismatch);
}

static void test_send_sees_the_link_go(void **state)
{
    (void)state;
    gdb_out_str(&link, "OK");
    fake_expect_reply("OK");
    fake_send_raw("-", 1);
    fake_expect_reply("OK");
    fake_send_raw("x\x03", 2); /* neither ack nor nak */
    assert_false(gdb_link_send(&link));
    assert_null(fake_link_finish());
}

static void test_receive_events(void **state)
{
    (void)state;
    static const char binary[] = "X0,3:\x00\x03\xff";
    fake_send_packet(binary, sizeof binary - 1);
    fake_expect_raw("+", 1);
    fake_send_raw("\x03", 1);
    fake_send_raw("+-", 2);
    fake_send_packet("qC", 2);
    fake_expect_raw("+", 1);

    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_PACKET);
    assert_int_equal(link.in_len, sizeof binary - 1);
    assert_memory_equal(link.in, binary, sizeof binary - 1);
    assert_int_equal(link.in[link.in_len], '\0');
    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_INTERRUPT);
    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_PACKET);
    assert_int_equal(link.in_len, 2);
    assert_string_equal(link.in, "qC");
    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_LOST);
    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_LOST);
    assert_null(fake_link_finish());
}

/* A transport that records where the stub flushes: a datagram transport sends each flushed unit as one. */
static const char *flush_input;
static char flush_log[256];
static size_t flush_log_len;

static int flush_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    (void)timeout_ms;
    return *flush_input ? (unsigned char)*flush_input++ : -1;
}

static void flush_putc(void *ctx, char c)
{
    (void)ctx;
    assert_true(flush_log_len < sizeof flush_log - 1);
    flush_log[flush_log_len++] = c;
}

static void flush_mark(void *ctx)
{
    (void)ctx;
    flush_putc(ctx, '|');
}

/* A link on transport t reads input (which must give gdb's `qC`) and answers QC1: what went out, flushes
 * marked '|', must be log. */
static void expect_qc_exchange_flushed(const struct gdb_transport *t, const char *input, const char *log)
{
    struct gdb_link *l = malloc(sizeof *l);
    assert_non_null(l);
    gdb_link_init(l, t);
    flush_log_len = 0;
    flush_input = input;
    assert_int_equal(gdb_link_receive(l), GDB_EVENT_PACKET);
    gdb_out_reset(l);
    gdb_out_str(l, "QC1");
    assert_true(gdb_link_send(l));
    flush_log[flush_log_len] = 0;
    assert_string_equal(flush_log, log);
    free(l);
}

static void test_every_ack_and_packet_ends_in_a_flush(void **state)
{
    (void)state;
    static const struct gdb_transport recording = { .getc = flush_getc, .putc = flush_putc, .flush = flush_mark };
    /* a bad checksum, then the packet again, our reply refused once, then acknowledged */
    expect_qc_exchange_flushed(&recording, "$qC#00$qC#b4-+", "-|+|$QC1#c5|$QC1#c5|");
}

/* A transport with a bulk write: the payload arrives in one write call, framed by putc, the wire unchanged. */
static unsigned flush_writes;

static void flush_write(void *ctx, const char *bytes, size_t len)
{
    flush_writes++;
    for (size_t i = 0; i < len; i++)
        flush_putc(ctx, bytes[i]);
}

static void test_a_transport_with_write_gets_the_payload_in_one_call_and_the_same_wire(void **state)
{
    (void)state;
    static const struct gdb_transport bulk = { .getc = flush_getc, .putc = flush_putc, .write = flush_write,
                                               .flush = flush_mark };
    flush_writes = 0;
    expect_qc_exchange_flushed(&bulk, "$qC#b4-+", "+|$QC1#c5|$QC1#c5|");
    assert_int_equal(flush_writes, 2); /* once per transmission, not per byte */
}

static void test_receive_oversized_packet(void **state)
{
    (void)state;
    size_t n = 3 * GDB_PACKET_SIZE;
    char *big = malloc(n);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    fake_send_packet(big, n);
    fake_expect_raw("+", 1);
    fake_send_packet(big, GDB_PACKET_SIZE);
    fake_expect_raw("+", 1);
    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_TOO_LONG);
    assert_int_equal(link.in_len, 0);
    assert_int_equal(gdb_link_receive(&link), GDB_EVENT_PACKET);
    assert_int_equal(link.in_len, GDB_PACKET_SIZE);
    assert_memory_equal(link.in, big, GDB_PACKET_SIZE);
    assert_int_equal(link.in[GDB_PACKET_SIZE], '\0');
    assert_null(fake_link_finish());
    free(big);
}

UNIT_MAIN_EACH(setup, fake_link_fixture, NULL, NULL,
               test_hex_digits, test_hex_encode_decode_every_byte, test_cursor_hex_numbers, test_cursor_strings,
               test_reply_builder_never_overflows, test_hex_numbers_out, test_binary_escapes,
               test_send_frames_and_overflow_becomes_an_error, test_send_sees_the_link_go, test_receive_events,
               test_receive_oversized_packet, test_every_ack_and_packet_ends_in_a_flush,
               test_a_transport_with_write_gets_the_payload_in_one_call_and_the_same_wire)
