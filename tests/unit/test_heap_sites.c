/* tests/unit/test_heap_sites.c: who holds the heap -- the table of allocation chains (kernel/profiler/heap_sites.c)
 * on its own, and the heap (kernel/heap.c) keeping it: each block's chain from the fake kernel's scripted walk,
 * its bytes given back to that chain by kfree, the snapshot leaving its own buffer out, and heap_check refusing a
 * table that disagrees with the blocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_kernel.h"
#include "heap_fixture.h"
#include "kernel/profiler/heap_sites.h"
#include "unit_main.h"

extern struct heap_sites heap_site_table;

static struct heap_sites table;

static int fresh(void **state)
{
    heap_sites_reset(&table);
    fake_tasks_reset(1);
    return setup(state);
}

/* ---- the table ------------------------------------------------------------------------------------------- */

static void one_chain_one_site_and_others_their_own(void **state)
{
    (void)state;
    uintptr_t a[] = { 0x1100, 0x1200, 0x1300 }, b[] = { 0x1100, 0x1200, 0x1301 };
    uint16_t sa = heap_sites_find(&table, a, 3);
    assert_int_not_equal(sa, HEAP_SITE_OTHER);
    assert_int_equal(heap_sites_find(&table, a, 3), sa);
    uint16_t sb = heap_sites_find(&table, b, 3);
    assert_int_not_equal(sb, sa);
    assert_int_not_equal(heap_sites_find(&table, a, 2), sa); /* a shorter chain is another chain */
    uint16_t none = heap_sites_find(&table, a, 0);             /* no frames: a chain of its own too */
    assert_int_not_equal(none, HEAP_SITE_OTHER);
    assert_int_equal(heap_sites_find(&table, b, 0), none);
    assert_int_equal(table.chains, 4);
}

static void frames_past_the_eighth_are_not_kept(void **state)
{
    (void)state;
    uintptr_t deep[12], deeper[12];
    for (unsigned i = 0; i < 12; i++)
        deep[i] = deeper[i] = 0x2000 + i;
    deeper[10] = 0x9999;
    uint16_t s = heap_sites_find(&table, deep, 12);
    assert_int_equal(heap_sites_find(&table, deeper, 12), s);
    assert_int_equal(table.slot[s - 1].nframes, HEAP_SITE_FRAMES);
}

static void a_full_table_counts_the_rest_as_other(void **state)
{
    (void)state;
    for (uintptr_t i = 0; i < HEAP_SITES_MAX; i++) {
        uint16_t s = heap_sites_find(&table, &i, 1);
        assert_int_not_equal(s, HEAP_SITE_OTHER);
        heap_sites_alloc(&table, s, 10);
    }
    uintptr_t late = 0x7777777;
    uint16_t other = heap_sites_find(&table, &late, 1);
    assert_int_equal(other, HEAP_SITE_OTHER);
    heap_sites_alloc(&table, other, 5);
    heap_sites_alloc(&table, 60000, 7); /* a number the table never gave: other too */
    uintptr_t first = 0;
    assert_int_not_equal(heap_sites_find(&table, &first, 1), HEAP_SITE_OTHER); /* known chains still found */
    struct heap_site *rows = calloc(HEAP_SITES_MAX, sizeof *rows), other_row;
    assert_int_equal(heap_sites_copy(&table, rows, HEAP_SITES_MAX, &other_row, HEAP_SITE_OTHER, 0), HEAP_SITES_MAX);
    assert_int_equal(other_row.allocs, 2);
    assert_int_equal(other_row.alloc_bytes, 12);
    free(rows);
}

static void the_copy_counts_its_own_buffer_as_freed(void **state)
{
    (void)state;
    uintptr_t a = 0x1100, b = 0x1200, never = 0x1300;
    uint16_t sa = heap_sites_find(&table, &a, 1), sb = heap_sites_find(&table, &b, 1);
    heap_sites_find(&table, &never, 1); /* claimed, never allocated from: not copied */
    heap_sites_alloc(&table, sa, 100);
    heap_sites_alloc(&table, sa, 50);
    heap_sites_free(&table, sa, 100);
    heap_sites_alloc(&table, sb, 4000);
    struct heap_site rows[4], other;
    unsigned n = heap_sites_copy(&table, rows, 4, &other, sb, 4000);
    assert_int_equal(n, 2);
    for (unsigned i = 0; i < n; i++) {
        if (rows[i].frames[0] == a) {
            assert_int_equal(heap_site_live_objects(&rows[i]), 1);
            assert_int_equal(heap_site_live_bytes(&rows[i]), 50);
            assert_int_equal(rows[i].allocs, 2);
        } else {
            assert_int_equal(rows[i].frames[0], b);
            assert_int_equal(heap_site_live_objects(&rows[i]), 0); /* the buffer: as good as freed */
            assert_int_equal(rows[i].allocs, 1);
        }
    }
    assert_int_equal(table.slot[sb - 1].frees, 0); /* the table itself is untouched */
    assert_int_equal(other.allocs, 0);
}

/* ---- the heap keeping it --------------------------------------------------------------------------------- */

static void walk_as(uintptr_t call_site, uintptr_t caller)
{
    fake_walk_chain[0] = call_site;
    fake_walk_chain[1] = caller;
    fake_walk_frames = 2;
}

/* The live row of the chain starting at call_site in a snapshot of the heap's table. */
static struct heap_site row_of(uintptr_t call_site)
{
    static struct heap_site rows[HEAP_SITES_MAX];
    struct heap_site other, none = { 0 };
    unsigned n = heap_sites_snapshot(rows, HEAP_SITES_MAX, &other);
    for (unsigned i = 0; i < n; i++)
        if (rows[i].nframes && rows[i].frames[0] == call_site)
            return rows[i];
    return none;
}

static void each_block_counts_for_its_callers_chain_until_freed(void **state)
{
    (void)state;
    walk_as(0xA000, 0xA100);
    void *p = kmalloc(100), *q = kzalloc(30);
    walk_as(0xB000, 0xB100);
    void *r = kmalloc_aligned(200, 256);
    struct heap_site a = row_of(0xA000), b = row_of(0xB000);
    assert_int_equal(a.nframes, 2);
    assert_int_equal(a.frames[1], 0xA100);
    assert_int_equal(heap_site_live_objects(&a), 2);
    assert_int_equal(heap_site_live_bytes(&a), 130); /* the bytes asked for, as `mem` counts used */
    assert_int_equal(heap_site_live_bytes(&b), 200);
    expect_sound();
    walk_as(0xC000, 0xC100); /* whoever frees, the bytes go back to the chain that allocated */
    kfree(p);
    kfree(r);
    a = row_of(0xA000);
    b = row_of(0xB000);
    assert_int_equal(a.allocs, 2);
    assert_int_equal(a.frees, 1);
    assert_int_equal(heap_site_live_bytes(&a), 30);
    assert_int_equal(heap_site_live_objects(&b), 0);
    assert_int_equal(row_of(0xC000).allocs, 0); /* the freeing chain allocated nothing */
    kfree(q);
    expect_sound();
    expect_baseline();
}

static void a_snapshot_leaves_its_own_buffer_out(void **state)
{
    (void)state;
    walk_as(0xD000, 0xD100);
    struct heap_site *rows = kmalloc(HEAP_SITES_MAX * sizeof *rows), other;
    unsigned n = heap_sites_snapshot(rows, HEAP_SITES_MAX, &other);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].frames[0], 0xD000);
    assert_int_equal(rows[0].allocs, 1);
    assert_int_equal(heap_site_live_objects(&rows[0]), 0);
    kfree(rows);
    expect_sound();
}

static void no_task_no_frames_one_chain(void **state)
{
    (void)state;
    fake_no_task = true; /* before the first task: the boot's allocations */
    walk_as(0xE000, 0xE100);
    void *p = kmalloc(64), *q = kmalloc(64);
    static struct heap_site rows[HEAP_SITES_MAX];
    struct heap_site other;
    assert_int_equal(heap_sites_snapshot(rows, HEAP_SITES_MAX, &other), 1);
    assert_int_equal(rows[0].nframes, 0);
    assert_int_equal(heap_site_live_objects(&rows[0]), 2);
    kfree(p);
    kfree(q);
    fake_no_task = false;
}

static void heap_check_refuses_a_table_that_disagrees_with_the_blocks(void **state)
{
    (void)state;
    walk_as(0xF000, 0xF100);
    void *p = kmalloc(48);
    expect_sound();
    unsigned i = 0;
    while (heap_site_table.slot[i].allocs == 0)
        i++;
    heap_site_table.slot[i].frees++;
    const char *why = NULL;
    assert_false(heap_check(&why));
    assert_string_equal(why, "the allocation sites disagree with the blocks");
    heap_site_table.slot[i].frees--;
    kfree(p);
    expect_sound();
}

UNIT_MAIN_EACH(fresh, NULL, NULL, NULL,
               one_chain_one_site_and_others_their_own, frames_past_the_eighth_are_not_kept,
               a_full_table_counts_the_rest_as_other, the_copy_counts_its_own_buffer_as_freed,
               each_block_counts_for_its_callers_chain_until_freed, a_snapshot_leaves_its_own_buffer_out,
               no_task_no_frames_one_chain, heap_check_refuses_a_table_that_disagrees_with_the_blocks)
