/* tests/unit/test_pprof_pb.c: the protocol-buffers writer (kernel/profiler/pb_writer.c) byte for byte --
 * varints at their boundaries (127/128, 2^14, 2^32, 2^64 - 1), keys, strings, packed fields, nested messages
 * whose length needs one byte or two (a body of 127 and of 128 bytes) and nesting two deep -- and its
 * failures: the limit, the heap saying no, every later write ignored, nothing handed over, nothing leaked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "counting_heap.h"
#include "kernel/heap.h"
#include "kernel/profiler/pb_writer.h"
#include "unit_main.h"

/* The heap counts and can be told to refuse its nth allocation from now (counting_heap.c's fail_at). */

static int setup(void **state)
{
    (void)state;
    counting_heap_reset();
    return 0;
}

#define BYTES(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

static void expect_bytes(struct pb_buf *b, const uint8_t *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
    pb_free(b);
}

static void expect_varint(uint64_t v, const uint8_t *want, size_t n)
{
    struct pb_buf b;
    pb_init(&b, 1024);
    pb_put_varint(&b, v);
    assert_int_equal(pb_varint_size(v), n);
    expect_bytes(&b, want, n);
}

static void test_varint_boundaries(void **state)
{
    (void)state;
    expect_varint(0, BYTES(0x00));
    expect_varint(1, BYTES(0x01));
    expect_varint(127, BYTES(0x7f));
    expect_varint(128, BYTES(0x80, 0x01));
    expect_varint(300, BYTES(0xac, 0x02));
    expect_varint(16383, BYTES(0xff, 0x7f));
    expect_varint(16384, BYTES(0x80, 0x80, 0x01));
    expect_varint(0xffffffffull, BYTES(0xff, 0xff, 0xff, 0xff, 0x0f));
    expect_varint(0x100000000ull, BYTES(0x80, 0x80, 0x80, 0x80, 0x10));
    expect_varint(UINT64_MAX, BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
    assert_int_equal(live_allocations, 0);
}

static void test_fields(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_init(&b, 1024);
    pb_uint(&b, 1, 150);       /* the protobuf documentation's example: 08 96 01 */
    pb_uint(&b, 16, 0);        /* a field number past 15 takes a two-byte key; 0 is written */
    pb_string(&b, 2, "testing");
    pb_string(&b, 6, "");
    uint64_t v[] = { 3, 270, 86942 };
    pb_packed(&b, 4, v, 3);    /* the documentation's packed example: 22 06 03 8e 02 9e a7 05 */
    pb_packed(&b, 5, v, 0);    /* nothing */
    expect_bytes(&b, BYTES(0x08, 0x96, 0x01, 0x80, 0x01, 0x00, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g',
                           0x32, 0x00, 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05));
}

/* A nested body of n bytes of one field: its length takes one byte up to 127 and two from 128. */
static void expect_nested_length(size_t body, const uint8_t *prefix, size_t prefix_len)
{
    struct pb_buf b;
    pb_init(&b, 4096);
    pb_uint(&b, 9, 1);
    pb_mark m = pb_begin(&b, 3);
    char filler[300];
    memset(filler, 'x', sizeof filler);
    pb_bytes(&b, 1, filler, body - 2); /* key 0x0a and a one-byte length */
    pb_end(&b, m);
    pb_uint(&b, 9, 2);
    assert_false(b.failed);
    assert_int_equal(b.len, 2 + prefix_len + body + 2);
    assert_memory_equal(b.data + 2, prefix, prefix_len);
    assert_int_equal(b.data[2 + prefix_len], 0x0a);
    assert_int_equal(b.data[2 + prefix_len + 1], body - 2);
    assert_int_equal(b.data[2 + prefix_len + body], 0x48);
    assert_int_equal(b.data[2 + prefix_len + body + 1], 2);
    pb_free(&b);
}

static void test_nested_lengths(void **state)
{
    (void)state;
    expect_nested_length(127, BYTES(0x1a, 0x7f));
    expect_nested_length(128, BYTES(0x1a, 0x80, 0x01));
    /* Two deep, and an empty message. */
    struct pb_buf b;
    pb_init(&b, 1024);
    pb_mark outer = pb_begin(&b, 4);
    pb_uint(&b, 1, 7);
    pb_mark inner = pb_begin(&b, 4);
    pb_uint(&b, 1, 9);
    pb_end(&b, inner);
    pb_mark empty = pb_begin(&b, 5);
    pb_end(&b, empty);
    pb_end(&b, outer);
    expect_bytes(&b, BYTES(0x22, 0x08, 0x08, 0x07, 0x22, 0x02, 0x08, 0x09, 0x2a, 0x00));
}

/* The buffer grows by doubling past its first 256 bytes; the bytes survive each move. */
static void test_grows_and_hands_over(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_init(&b, 1 << 20);
    for (unsigned i = 0; i < 5000; i++)
        pb_uint(&b, 1, i);
    assert_false(b.failed);
    assert_int_equal(live_allocations, 1);
    size_t len;
    uint8_t *data = pb_take(&b, &len);
    assert_non_null(data);
    assert_int_equal(b.len, 0);
    assert_null(b.data);
    /* 128 one-byte values, then two-byte ones: each with its key 0x08. */
    assert_int_equal(len, 128 * 2 + (5000 - 128) * 3);
    assert_int_equal(data[256 + 3 * (200 - 128)], 0x08); /* the key of value 200 */
    assert_int_equal(data[256 + 3 * (200 - 128) + 1], (200 & 0x7f) | 0x80);
    assert_int_equal(data[len - 3], 0x08);
    assert_int_equal(data[len - 2], (4999 & 0x7f) | 0x80);
    assert_int_equal(data[len - 1], 4999 >> 7);
    kfree(data);
    assert_int_equal(live_allocations, 0);
}

/* Past the limit: failed, every later write ignored, pb_take hands nothing over and frees what there was. */
static void test_limit(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_init(&b, 300);
    char big[290];
    memset(big, 'y', sizeof big);
    pb_bytes(&b, 1, big, sizeof big);
    assert_false(b.failed);
    pb_bytes(&b, 1, big, sizeof big);
    assert_true(b.failed);
    size_t before = b.len;
    pb_uint(&b, 1, 1);
    pb_mark m = pb_begin(&b, 2);
    pb_end(&b, m);
    assert_int_equal(b.len, before);
    size_t len = 99;
    assert_null(pb_take(&b, &len));
    assert_int_equal(len, 0);
    assert_int_equal(live_allocations, 0);
}

static void test_heap_refuses(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_init(&b, 1 << 20);
    pb_uint(&b, 1, 1); /* the first allocation */
    fail_at = 1;       /* the growth past 256 bytes */
    char big[300];
    memset(big, 'z', sizeof big);
    pb_bytes(&b, 2, big, sizeof big);
    assert_true(b.failed);
    size_t len;
    assert_null(pb_take(&b, &len));
    assert_int_equal(live_allocations, 0);
    pb_init(&b, 1 << 20);
    fail_at = 1; /* the very first */
    pb_uint(&b, 1, 1);
    assert_true(b.failed);
    pb_free(&b);
    assert_int_equal(live_allocations, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_varint_boundaries, test_fields, test_nested_lengths, test_grows_and_hands_over, test_limit,
               test_heap_refuses)
