/* tests/unit/test_heap_aligned.c: kmalloc_aligned in kernel/heap.c -- where an aligned block lands, the free
 * lead block it leaves (or must not leave), every power of two, and the panic on an alignment it refuses. */
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

static void test_aligned_with_room_for_leading_free_block(void **state)
{
    (void)state;
    void *small = kmalloc(16); /* [arena, arena+48) */
    unsigned char *page = kmalloc_aligned(64, 4096);
    assert_ptr_equal(page, arena + 4096);
    struct heap_stats s = stats_now();
    /* The lead [arena+48, arena+4080) stays free; the used block is 96 bytes; the tail follows. */
    assert_int_equal(s.free_bytes, ARENA_SIZE - 48 - block_for(64));
    assert_int_equal(s.largest_free, ARENA_SIZE - 4080 - block_for(64));
    assert_int_equal(s.overhead_bytes, (48 - 16) + (block_for(64) - 64));
    expect_sound();
    /* The lead is an ordinary free block: a small allocation lands there. */
    assert_ptr_equal(kmalloc(32), arena + 48 + HDR);
    kfree(arena + 48 + HDR);
    kfree(page);
    assert_int_equal(stats_now().largest_free, ARENA_SIZE - 48);
    kfree(small);
    expect_baseline();
}

static void test_aligned_lead_too_small_for_a_block(void **state)
{
    (void)state;
    /* The free block starts at arena+4048: the next 4096 boundary would leave a 32-byte lead, too small for
     * a free block, so the allocation moves to the boundary after. */
    void *first = kmalloc(4048 - OVERHEAD);
    unsigned char *page = kmalloc_aligned(100, 4096);
    assert_ptr_equal(page, arena + 8192);
    expect_sound();
    struct heap_stats s = stats_now();
    assert_int_equal(s.free_bytes, ARENA_SIZE - 4048 - block_for(100));
    kfree(page);
    kfree(first);
    expect_baseline();
}

static void test_aligned_exact_fit_leaves_no_lead(void **state)
{
    (void)state;
    void *first = kmalloc(4080 - OVERHEAD); /* free block starts at arena+4080: header ends at 4096 */
    unsigned char *page = kmalloc_aligned(4096, 4096);
    assert_ptr_equal(page, arena + 4096);
    struct heap_stats s = stats_now();
    assert_int_equal(s.free_bytes, ARENA_SIZE - 4080 - block_for(4096));
    assert_int_equal(s.largest_free, s.free_bytes); /* no lead block was made */
    kfree(first);
    kfree(page);
    expect_baseline();
}

static void test_aligned_every_power_of_two(void **state)
{
    (void)state;
    void *ptrs[2 * 13];
    int n = 0;
    for (size_t align = 1; align <= 4096; align <<= 1) {
        unsigned char *p = kmalloc_aligned(align + 3, align);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % (align < 16 ? 16 : align), 0);
        fill(p, align + 3, (unsigned)align);
        ptrs[n++] = p;
        ptrs[n++] = kmalloc(24); /* disturb the next allocation's start */
    }
    expect_sound();
    n = 0;
    for (size_t align = 1; align <= 4096; align <<= 1, n += 2)
        verify(ptrs[n], align + 3, (unsigned)align);
    for (int i = 0; i < n; i += 2)
        kfree(ptrs[i]);
    expect_sound();
    for (int i = 1; i < n; i += 2)
        kfree(ptrs[i]);
    expect_baseline();
}

static void test_aligned_rejects_bad_alignment(void **state)
{
    (void)state;
    EXPECT_PANIC(kmalloc_aligned(16, 3));
    assert_non_null(strstr(fake_panic_message, "kmalloc_aligned: alignment 3 "));
    EXPECT_PANIC(kmalloc_aligned(16, 8192));
    assert_non_null(strstr(fake_panic_message, "alignment 8192 "));
    EXPECT_PANIC(kmalloc_aligned(16, 0));
    assert_non_null(strstr(fake_panic_message, "alignment 0 "));
    expect_baseline();
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_aligned_with_room_for_leading_free_block, test_aligned_lead_too_small_for_a_block,
               test_aligned_exact_fit_leaves_no_lead, test_aligned_every_power_of_two,
               test_aligned_rejects_bad_alignment)
