/* tests/unit/test_heap.c: the kernel heap (kernel/heap.c) over a static arena -- exact placement and
 * statistics, fill/free orders, data integrity, aligned allocations, coalescing, exhaustion, and the panics
 * and heap_check findings that a misused or corrupted heap must produce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/heap.h"

#define ARENA_SIZE (256 * 1024)
/* Page-aligned so addresses (and aligned allocations) can be predicted exactly from the arena start. */
static _Alignas(4096) unsigned char arena[ARENA_SIZE];

/* Constants of the block layout the expectations are computed from: 16-byte header, 8-byte footer,
 * 16-byte granularity, 48-byte minimum block. */
#define HDR 16
#define OVERHEAD 24
#define MIN_BLOCK 48
static size_t block_for(size_t request)
{
    size_t need = (request + OVERHEAD + 15) & ~(size_t)15;
    return need < MIN_BLOCK ? MIN_BLOCK : need;
}

static struct heap_stats baseline;

static int setup(void **state)
{
    (void)state;
    memset(arena, 0, sizeof arena);
    heap_init(arena, sizeof arena);
    heap_get_stats(&baseline);
    return 0;
}

static void expect_sound(void)
{
    const char *why = NULL;
    if (!heap_check(&why))
        fail_msg("heap_check: %s", why);
}

static struct heap_stats stats_now(void)
{
    struct heap_stats s;
    heap_get_stats(&s);
    return s;
}

/* Everything freed: the byte counts are exactly those of a fresh heap and one free block spans it all. */
static void expect_baseline(void)
{
    struct heap_stats s = stats_now();
    assert_int_equal(s.total_bytes, ARENA_SIZE);
    assert_int_equal(s.used_bytes, 0);
    assert_int_equal(s.overhead_bytes, 0);
    assert_int_equal(s.free_bytes, baseline.free_bytes);
    assert_int_equal(s.largest_free, ARENA_SIZE);
    assert_int_equal(s.live_blocks, 0);
    assert_int_equal(s.allocs, s.frees);
    expect_sound();
}

static void fill(void *p, size_t n, unsigned seed)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

static void verify(const void *p, size_t n, unsigned seed)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8)))
            fail_msg("block %u corrupted at byte %zu", seed, i);
    }
}

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

static void test_fill_free_ascending(void **state)
{
    (void)state;
    fill_all();
    for (int i = 0; i < SLOTS; i++) {
        free_slot(i);
        if (i % 16 == 0)
            expect_sound();
    }
    expect_baseline();
}

static void test_fill_free_descending(void **state)
{
    (void)state;
    fill_all();
    for (int i = SLOTS - 1; i >= 0; i--) {
        free_slot(i);
        if (i % 16 == 0)
            expect_sound();
    }
    expect_baseline();
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_fresh_heap_stats, setup),
        cmocka_unit_test_setup(test_exact_placement_and_stats, setup),
        cmocka_unit_test_setup(test_misaligned_base, setup),
        cmocka_unit_test_setup(test_region_too_small, setup),
        cmocka_unit_test_setup(test_zero_size_and_null_free, setup),
        cmocka_unit_test_setup(test_fill_free_ascending, setup),
        cmocka_unit_test_setup(test_fill_free_descending, setup),
        cmocka_unit_test_setup(test_fill_free_interleaved, setup),
        cmocka_unit_test_setup(test_random_alloc_free, setup),
        cmocka_unit_test_setup(test_kzalloc_zeroes_reused_memory, setup),
        cmocka_unit_test_setup(test_aligned_with_room_for_leading_free_block, setup),
        cmocka_unit_test_setup(test_aligned_lead_too_small_for_a_block, setup),
        cmocka_unit_test_setup(test_aligned_exact_fit_leaves_no_lead, setup),
        cmocka_unit_test_setup(test_aligned_every_power_of_two, setup),
        cmocka_unit_test_setup(test_aligned_rejects_bad_alignment, setup),
        cmocka_unit_test_setup(test_coalescing_back_to_one_block, setup),
        cmocka_unit_test_setup(test_out_of_memory, setup),
        cmocka_unit_test_setup(test_fragmented_heap_fails_despite_free_bytes, setup),
        cmocka_unit_test_setup(test_double_free_panics, setup),
        cmocka_unit_test_setup(test_bad_pointer_panics, setup),
        cmocka_unit_test_setup(test_heap_check_detects_smashed_header, setup),
        cmocka_unit_test_setup(test_heap_check_detects_broken_free_list, setup),
        cmocka_unit_test_setup(test_heap_check_detects_unordered_free_list, setup),
        cmocka_unit_test_setup(test_heap_check_detects_bad_accounting, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
