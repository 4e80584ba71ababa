/* tests/unit/test_heap_alloc.c: the kernel heap (kernel/heap.c) used as intended -- exact placement and
 * statistics, the edges of the region, fill/free orders and a random load with data integrity checked, kzalloc,
 * coalescing back to one block, and exhaustion. Arena and shared checks: heap_fixture.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "heap_fixture.h"
#include "unit_main.h"

static void test_fresh_heap_stats(void **state)
{
    (void)state;
    assert_int_equal(baseline.total_bytes, ARENA_SIZE);
    assert_int_equal(baseline.free_bytes, ARENA_SIZE);
    assert_int_equal(baseline.largest_free, ARENA_SIZE);
    assert_int_equal(baseline.used_bytes, 0);
    assert_int_equal(baseline.overhead_bytes, 0);
    assert_int_equal(baseline.allocs, 0);
    assert_int_equal(baseline.frees, 0);
    assert_int_equal(baseline.failed, 0);
    assert_int_equal(baseline.live_blocks, 0);
    assert_int_equal(baseline.peak_used, 0);
    expect_sound();
}

static void test_exact_placement_and_stats(void **state)
{
    (void)state;
    unsigned char *a = kmalloc(100);
    assert_ptr_equal(a, arena + HDR); /* first fit from the bottom */
    unsigned char *b = kmalloc(1);
    assert_ptr_equal(b, arena + block_for(100) + HDR);
    struct heap_stats s = stats_now();
    assert_int_equal(block_for(100), 128);
    assert_int_equal(block_for(1), 48);
    assert_int_equal(s.used_bytes, 101);
    assert_int_equal(s.overhead_bytes, (128 - 100) + (48 - 1));
    assert_int_equal(s.free_bytes, ARENA_SIZE - 128 - 48);
    assert_int_equal(s.largest_free, ARENA_SIZE - 128 - 48);
    assert_int_equal(s.allocs, 2);
    assert_int_equal(s.live_blocks, 2);
    assert_int_equal(s.peak_used, 101);
    kfree(a);
    s = stats_now();
    assert_int_equal(s.used_bytes, 1);
    assert_int_equal(s.free_bytes, ARENA_SIZE - 48);
    assert_int_equal(s.largest_free, ARENA_SIZE - 128 - 48);
    assert_int_equal(s.peak_used, 101);
    assert_int_equal(s.frees, 1);
    /* The freed hole is reused by the next allocation that fits. */
    unsigned char *c = kmalloc(64);
    assert_ptr_equal(c, arena + HDR);
    kfree(b);
    kfree(c);
    expect_baseline();
    assert_int_equal(stats_now().allocs, 3);
}

static void test_misaligned_base(void **state)
{
    (void)state;
    heap_init(arena + 3, 1000); /* usable: [arena+16, arena+992) */
    struct heap_stats s = stats_now();
    assert_int_equal(s.total_bytes, 976);
    assert_int_equal(s.free_bytes, 976);
    unsigned char *p = kmalloc(10);
    assert_ptr_equal(p, arena + 16 + HDR);
    assert_null(kmalloc(976));
    unsigned char *rest = kmalloc(976 - 48 - OVERHEAD); /* exactly the remaining block */
    assert_ptr_equal(rest, arena + 16 + 48 + HDR);
    assert_int_equal(stats_now().free_bytes, 0);
    assert_int_equal(stats_now().largest_free, 0);
    kfree(p);
    kfree(rest);
    s = stats_now();
    assert_int_equal(s.free_bytes, 976);
    assert_int_equal(s.largest_free, 976);
    expect_sound();
}

static void test_region_too_small(void **state)
{
    (void)state;
    heap_init(arena, 47);
    assert_int_equal(stats_now().total_bytes, 0);
    assert_null(kmalloc(1));
    assert_int_equal(stats_now().failed, 1);
    expect_sound();
    heap_init(arena, 48); /* exactly one minimum block */
    assert_int_equal(stats_now().total_bytes, 48);
    void *p = kmalloc(24);
    assert_ptr_equal(p, arena + HDR);
    assert_null(kmalloc(1));
    kfree(p);
    expect_sound();
}

static void test_zero_size_and_null_free(void **state)
{
    (void)state;
    assert_null(kmalloc(0));
    assert_null(kzalloc(0));
    assert_null(kmalloc_aligned(0, 64));
    kfree(NULL);
    struct heap_stats s = stats_now();
    assert_int_equal(s.failed, 0); /* asking for nothing is not running out */
    assert_int_equal(s.allocs, 0);
    assert_int_equal(s.frees, 0);
    expect_baseline();
}

enum { SLOTS = 300 };
static void *slots[SLOTS];
static size_t slot_size[SLOTS];

static void fill_all(void)
{
    for (int i = 0; i < SLOTS; i++) {
        slot_size[i] = (size_t)(1 + (i * 37) % 500);
        slots[i] = kmalloc(slot_size[i]);
        assert_non_null(slots[i]);
        assert_int_equal((uintptr_t)slots[i] % 16, 0);
        fill(slots[i], slot_size[i], (unsigned)i);
    }
    expect_sound();
    struct heap_stats s = stats_now();
    size_t used = 0, blocks = 0;
    for (int i = 0; i < SLOTS; i++) {
        used += slot_size[i];
        blocks += block_for(slot_size[i]);
    }
    assert_int_equal(s.used_bytes, used);
    assert_int_equal(s.overhead_bytes, blocks - used);
    assert_int_equal(s.free_bytes, ARENA_SIZE - blocks);
    assert_int_equal(s.largest_free, ARENA_SIZE - blocks); /* packed from the bottom: one tail block */
    assert_int_equal(s.live_blocks, SLOTS);
    assert_int_equal(s.peak_used, used);
}

static void free_slot(int i)
{
    verify(slots[i], slot_size[i], (unsigned)i);
    kfree(slots[i]);
    slots[i] = NULL;
}

/* Every slot filled, then freed in order (slot n of SLOTS is freed n-th, or SLOTS - 1 - n-th when descending),
 * the heap sound every 16 slots and back to a fresh heap at the end. */
static void fill_then_free_in_order(bool descending)
{
    fill_all();
    for (int n = 0; n < SLOTS; n++) {
        int i = descending ? SLOTS - 1 - n : n;
        free_slot(i);
        if (i % 16 == 0)
            expect_sound();
    }
    expect_baseline();
}

static void test_fill_free_ascending(void **state)
{
    (void)state;
    fill_then_free_in_order(false);
}

static void test_fill_free_descending(void **state)
{
    (void)state;
    fill_then_free_in_order(true);
}

static void test_fill_free_interleaved(void **state)
{
    (void)state;
    fill_all();
    for (int i = 0; i < SLOTS; i += 2)
        free_slot(i);
    expect_sound();
    /* Every even block is a hole between live odd blocks: none may have merged. The largest hole is the
     * biggest even block, or the tail (which absorbed the last even block when SLOTS is even, but the last
     * slot is odd here). */
    struct heap_stats s = stats_now();
    size_t largest_even = 0, blocks = 0;
    for (int i = 0; i < SLOTS; i++) {
        blocks += block_for(slot_size[i]);
        if (i % 2 == 0 && block_for(slot_size[i]) > largest_even)
            largest_even = block_for(slot_size[i]);
    }
    size_t tail = ARENA_SIZE - blocks;
    assert_int_equal(s.largest_free, tail > largest_even ? tail : largest_even);
    assert_int_equal(s.live_blocks, SLOTS / 2);
    /* The holes are reused: refill them, then check the odd blocks were not disturbed. */
    for (int i = 0; i < SLOTS; i += 2) {
        slots[i] = kmalloc(slot_size[i]);
        assert_non_null(slots[i]);
        fill(slots[i], slot_size[i], (unsigned)i);
    }
    assert_int_equal(stats_now().largest_free, tail);
    for (int i = 1; i < SLOTS; i += 2)
        free_slot(i);
    expect_sound();
    for (int i = 0; i < SLOTS; i += 2)
        free_slot(i);
    expect_baseline();
}

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    /* xorshift64: deterministic on every host, unlike rand(). */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_random_alloc_free(void **state)
{
    (void)state;
    rng_state = 0x6b70726f66ull;
    unsigned tag[SLOTS];
    size_t live_used = 0;
    unsigned next_tag = 1;
    memset(slots, 0, sizeof slots);
    for (int op = 0; op < 20000; op++) {
        int i = (int)(rng_next() % SLOTS);
        if (slots[i] == NULL) {
            size_t size = 1 + (size_t)(rng_next() % 3000);
            bool aligned = rng_next() % 8 == 0;
            size_t align = (size_t)16 << (rng_next() % 9); /* 16 .. 4096 */
            slots[i] = aligned ? kmalloc_aligned(size, align) : kmalloc(size);
            if (slots[i] == NULL)
                continue; /* the arena can run out under this load; that is fine */
            if (aligned)
                assert_int_equal((uintptr_t)slots[i] % align, 0);
            slot_size[i] = size;
            tag[i] = next_tag++;
            fill(slots[i], size, tag[i]);
            live_used += size;
        } else {
            verify(slots[i], slot_size[i], tag[i]);
            kfree(slots[i]);
            slots[i] = NULL;
            live_used -= slot_size[i];
        }
        if (op % 500 == 0) {
            expect_sound();
            assert_int_equal(stats_now().used_bytes, live_used);
        }
    }
    expect_sound();
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i] != NULL) {
            verify(slots[i], slot_size[i], tag[i]);
            kfree(slots[i]);
            slots[i] = NULL;
        }
    }
    expect_baseline();
}

static void test_kzalloc_zeroes_reused_memory(void **state)
{
    (void)state;
    unsigned char *dirty = kmalloc(1000);
    memset(dirty, 0xa5, 1000);
    kfree(dirty);
    unsigned char *clean = kzalloc(1000);
    assert_ptr_equal(clean, dirty);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(clean[i], 0);
    kfree(clean);
    expect_baseline();
}

static void test_coalescing_back_to_one_block(void **state)
{
    (void)state;
    unsigned char *a = kmalloc(200), *b = kmalloc(300), *c = kmalloc(400), *d = kmalloc(500);
    size_t ba = block_for(200), bb = block_for(300), bc = block_for(400), bd = block_for(500);
    size_t tail = ARENA_SIZE - ba - bb - bc - bd;

    kfree(b); /* a hole between a and c */
    assert_int_equal(stats_now().largest_free, tail);
    kfree(d); /* merges into the tail */
    assert_int_equal(stats_now().largest_free, tail + bd);
    expect_sound();
    kfree(a); /* merges forward with b's hole */
    struct heap_stats s = stats_now();
    assert_int_equal(s.free_bytes, ARENA_SIZE - bc);
    assert_int_equal(s.largest_free, tail + bd);
    expect_sound();
    /* a+b form one block now: an allocation of exactly their size lands at a. */
    unsigned char *ab = kmalloc(ba + bb - OVERHEAD);
    assert_ptr_equal(ab, a);
    kfree(ab);
    kfree(c); /* merges both ways: one block again */
    s = stats_now();
    assert_int_equal(s.largest_free, ARENA_SIZE);
    assert_int_equal(s.free_bytes, ARENA_SIZE);
    expect_baseline();
    assert_ptr_equal(kmalloc(ARENA_SIZE - OVERHEAD), arena + HDR);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    assert_null(kmalloc(ARENA_SIZE));
    assert_null(kmalloc(ARENA_SIZE - OVERHEAD + 1));
    assert_null(kmalloc(SIZE_MAX));
    assert_null(kmalloc(SIZE_MAX - 20));
    assert_null(kmalloc_aligned(SIZE_MAX, 4096));
    assert_int_equal(stats_now().failed, 5);
    void *all = kmalloc(ARENA_SIZE - OVERHEAD); /* exactly the whole arena */
    assert_ptr_equal(all, arena + HDR);
    assert_null(kmalloc(1));
    assert_null(kzalloc(1));
    struct heap_stats s = stats_now();
    assert_int_equal(s.failed, 7);
    assert_int_equal(s.free_bytes, 0);
    assert_int_equal(s.largest_free, 0);
    assert_int_equal(s.allocs, 1);
    kfree(all);
    expect_baseline();
    assert_int_equal(stats_now().failed, 7);
}

static void test_fragmented_heap_fails_despite_free_bytes(void **state)
{
    (void)state;
    heap_init(arena, 48 * 10);
    void *blocks[10];
    for (int i = 0; i < 10; i++)
        assert_non_null(blocks[i] = kmalloc(24));
    for (int i = 0; i < 10; i += 2)
        kfree(blocks[i]);
    struct heap_stats s = stats_now();
    assert_int_equal(s.free_bytes, 48 * 5);
    assert_int_equal(s.largest_free, 48);
    assert_null(kmalloc(25)); /* needs 64 contiguous bytes */
    assert_int_equal(stats_now().failed, 1);
    assert_non_null(kmalloc(24));
    expect_sound();
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_fresh_heap_stats, test_exact_placement_and_stats, test_misaligned_base, test_region_too_small,
               test_zero_size_and_null_free, test_fill_free_ascending, test_fill_free_descending,
               test_fill_free_interleaved, test_random_alloc_free, test_kzalloc_zeroes_reused_memory,
               test_coalescing_back_to_one_block, test_out_of_memory, test_fragmented_heap_fails_despite_free_bytes)
