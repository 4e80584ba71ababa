/* tests/unit/test_heap_misuse.c: a misused or corrupted kernel heap (kernel/heap.c) -- the panics of a double
 * free or a pointer the heap never gave out, and each finding heap_check reports for a smashed header or
 * footer, a broken or unordered free list, and statistics that disagree with the blocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "heap_fixture.h"
#include "unit_main.h"

static void test_double_free_panics(void **state)
{
    (void)state;
    void *p = kmalloc(32);
    kfree(p);
    EXPECT_PANIC(kfree(p));
    assert_non_null(strstr(fake_panic_message, "kfree: double free of "));
    assert_non_null(strstr(fake_panic_message, "caller 0x"));

    /* Freed after its neighbour, the block was merged into it; a second free is still recognised. */
    void *a = kmalloc(64), *b = kmalloc(64);
    kfree(a);
    kfree(b);
    EXPECT_PANIC(kfree(b));
    assert_non_null(strstr(fake_panic_message, "kfree: double free of "));

    /* The panic released the lock and changed nothing: the heap still works. */
    expect_baseline();
    void *q = kmalloc(32);
    assert_non_null(q);
    kfree(q);
    expect_baseline();
}

static void test_bad_pointer_panics(void **state)
{
    (void)state;
    unsigned char *p = kmalloc(256);
    memset(p, 0, 256);
    int on_stack;

    EXPECT_PANIC(kfree(&on_stack));
    assert_non_null(strstr(fake_panic_message, "kfree: "));
    assert_non_null(strstr(fake_panic_message, "is outside the heap"));
    EXPECT_PANIC(kfree(arena + ARENA_SIZE));
    assert_non_null(strstr(fake_panic_message, "is outside the heap"));
    EXPECT_PANIC(kfree(arena)); /* no room for a header below it */
    assert_non_null(strstr(fake_panic_message, "is outside the heap"));

    EXPECT_PANIC(kfree(p + 1));
    assert_non_null(strstr(fake_panic_message, "kfree: "));
    assert_non_null(strstr(fake_panic_message, "is misaligned"));
    EXPECT_PANIC(kfree(p + 8));
    assert_non_null(strstr(fake_panic_message, "is misaligned"));

    EXPECT_PANIC(kfree(p + 64)); /* aligned, inside a payload of zeros */
    assert_non_null(strstr(fake_panic_message, "kfree: "));
    assert_non_null(strstr(fake_panic_message, "has no heap header (magic 0"));

    /* A footer overwritten past the payload is caught when the block is freed. */
    uint64_t *footer = (uint64_t *)(p - HDR + block_for(256) - 8);
    uint64_t saved = *footer;
    *footer = 0x4141414141414141ull;
    EXPECT_PANIC(kfree(p));
    assert_non_null(strstr(fake_panic_message, "kfree: block of "));
    assert_non_null(strstr(fake_panic_message, "is corrupt"));
    *footer = saved;

    /* None of it changed the heap. */
    assert_int_equal(stats_now().live_blocks, 1);
    assert_int_equal(stats_now().frees, 0);
    kfree(p);
    expect_baseline();
}

static void expect_corrupt(const char *expected_why)
{
    const char *why = NULL;
    assert_false(heap_check(&why));
    assert_string_equal(why, expected_why);
}

static void test_heap_check_detects_smashed_header(void **state)
{
    (void)state;
    unsigned char *a = kmalloc(64), *b = kmalloc(64);
    uint64_t *b_header = (uint64_t *)(b - HDR);
    uint64_t saved_size = b_header[0], saved_magic = b_header[1];

    memset(b - HDR, 0x41, 8); /* size word: a huge size */
    expect_corrupt("a block size is out of range");
    b_header[0] = saved_size;
    expect_sound();

    b_header[1] = saved_magic ^ 1; /* magic (and slack) word */
    expect_corrupt("a block header has the wrong magic");
    b_header[1] = saved_magic;

    b_header[0] = saved_size + 16; /* plausible size, but the footer disagrees */
    expect_corrupt("a block footer does not match its header");
    b_header[0] = saved_size;

    /* An overflow off the end of a's payload runs into a's footer. */
    memset(a + 64, 0x42, 16);
    expect_corrupt("a block footer does not match its header");
    memset(a + 64, 0, 16);
    *(uint64_t *)(a - HDR + block_for(64) - 8) = saved_size | 1;
    expect_sound();

    kfree(a);
    kfree(b);
    expect_baseline();
}

static void test_heap_check_detects_broken_free_list(void **state)
{
    (void)state;
    void *a = kmalloc(64), *b = kmalloc(64), *c = kmalloc(64);
    kfree(b); /* free list: b's hole, then the tail */
    uint64_t *hole = (uint64_t *)((unsigned char *)b - HDR);
    uint64_t saved_prev = hole[2], saved_next = hole[3];

    hole[3] = 0; /* drop the tail from the list */
    expect_corrupt("free blocks are missing from the free list");
    hole[3] = saved_next;

    hole[3] = (uint64_t)(uintptr_t)hole; /* a cycle: must end the walk, not hang it */
    expect_corrupt("a free list back link is broken");
    hole[3] = saved_next;

    /* The tail pointing back at the hole: the hole's back link does not name the tail. */
    uint64_t *tail = (uint64_t *)(uintptr_t)saved_next;
    uint64_t saved_tail_next = tail[3];
    tail[3] = (uint64_t)(uintptr_t)hole;
    expect_corrupt("a free list back link is broken");
    tail[3] = saved_tail_next;

    hole[3] = (uint64_t)(uintptr_t)arena + 8; /* misaligned */
    expect_corrupt("a free list entry points outside the heap");
    hole[3] = (uint64_t)(uintptr_t)c - HDR; /* a live block */
    expect_corrupt("a free list entry is not a free block");
    hole[3] = saved_next;

    hole[2] = (uint64_t)(uintptr_t)hole; /* wrong back link */
    expect_corrupt("a free list back link is broken");
    hole[2] = saved_prev;
    expect_sound();

    kfree(a);
    kfree(c);
    expect_baseline();
}

static void test_heap_check_detects_unordered_free_list(void **state)
{
    (void)state;
    unsigned char *a = kmalloc(64), *b = kmalloc(64), *c = kmalloc(64), *d = kmalloc(64), *e = kmalloc(64);
    kfree(b);
    kfree(d); /* free list: b's hole, d's hole, the tail */
    uint64_t *x = (uint64_t *)(b - HDR), *y = (uint64_t *)(d - HDR);
    uint64_t *tail = (uint64_t *)(uintptr_t)y[3];
    assert_ptr_equal((uint64_t *)(uintptr_t)x[3], y);
    assert_ptr_equal(tail, e - HDR + block_for(64));
    expect_sound();

    /* Rewire to b's hole, tail, d's hole with every back link consistent: only the order is wrong. */
    x[3] = (uint64_t)(uintptr_t)tail;
    tail[2] = (uint64_t)(uintptr_t)x;
    tail[3] = (uint64_t)(uintptr_t)y;
    y[2] = (uint64_t)(uintptr_t)tail;
    y[3] = 0;
    expect_corrupt("the free list is out of address order");
    x[3] = (uint64_t)(uintptr_t)y;
    y[2] = (uint64_t)(uintptr_t)x;
    y[3] = (uint64_t)(uintptr_t)tail;
    tail[2] = (uint64_t)(uintptr_t)y;
    tail[3] = 0;
    expect_sound();

    kfree(a);
    kfree(c);
    kfree(e);
    expect_baseline();
}

static void test_heap_check_detects_bad_accounting(void **state)
{
    (void)state;
    unsigned char *a = kmalloc(64), *b = kmalloc(64);
    uint64_t *b_header = (uint64_t *)(b - HDR);
    uint64_t saved_size = b_header[0], saved_magic = b_header[1];

    b_header[1] = saved_magic + (1ull << 32); /* one more byte of slack: fewer bytes in use than counted */
    expect_corrupt("the statistics disagree with the blocks");
    b_header[1] = saved_magic;

    /* b turned free by hand, without merging into the free tail after it. */
    b_header[0] = saved_size & ~1ull;
    b_header[1] = 0x6b667265u; /* the free magic */
    *(uint64_t *)(b - HDR + block_for(64) - 8) = saved_size & ~1ull;
    expect_corrupt("two free blocks are adjacent (a missed coalesce)");
    b_header[0] = saved_size;
    b_header[1] = saved_magic;
    *(uint64_t *)(b - HDR + block_for(64) - 8) = saved_size;
    expect_sound();

    kfree(a);
    kfree(b);
    expect_baseline();
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_double_free_panics, test_bad_pointer_panics, test_heap_check_detects_smashed_header,
               test_heap_check_detects_broken_free_list, test_heap_check_detects_unordered_free_list,
               test_heap_check_detects_bad_accounting)
