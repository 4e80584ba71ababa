/* tests/unit/test_block_sites.c: the block table (kernel/profiler/block_sites.c) -- one chain counted once with
 * its waits and their time summed; chains told apart by any frame and by what they waited on; chains longer than
 * BLOCK_SITE_FRAMES cut to it and negative delays taken as 0; a full table's further chains counted as "other"
 * while its chains go on counting; a claimed entry whose key is still being written passed by, and twins (one
 * chain in two entries, left by two tasks that met it at once) added together by the snapshot; and four threads
 * adding to shared and private chains at once, every wait and nanosecond accounted for. Tables are the test's
 * own. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/profiler/block_sites.h"
#include "unit_main.h"

static struct block_table table;
static struct block_row rows[BLOCK_SITES + 1];
static struct block_row other;

static int setup(void **state)
{
    (void)state;
    memset(&table, 0, sizeof table);
    return 0;
}

static unsigned snapshot(void)
{
    return block_table_snapshot(&table, rows, BLOCK_SITES, &other);
}

/* The row of chain frames[0..n) waiting on wait, or NULL. */
static const struct block_row *row_of(unsigned nrows, const uintptr_t *frames, unsigned n, uint8_t wait)
{
    for (unsigned i = 0; i < nrows; i++) {
        if (rows[i].nframes != n || rows[i].waiting_on != wait)
            continue;
        if (n == 0 || memcmp(rows[i].frames, frames, n * sizeof *frames) == 0)
            return &rows[i];
    }
    return NULL;
}

static void test_one_chain_is_one_row(void **state)
{
    (void)state;
    const uintptr_t chain[] = { 0x101234, 0x102000, 0x103000 };
    block_table_add(&table, chain, 3, 2, 1000);
    block_table_add(&table, chain, 3, 2, 2500);
    block_table_add(&table, chain, 3, 2, 0);
    assert_int_equal(snapshot(), 1);
    assert_int_equal(rows[0].nframes, 3);
    assert_memory_equal(rows[0].frames, chain, sizeof chain);
    assert_int_equal(rows[0].frames[3], 0);
    assert_int_equal(rows[0].waiting_on, 2);
    assert_int_equal(rows[0].count, 3);
    assert_int_equal(rows[0].delay_ns, 3500);
    assert_int_equal(other.count, 0);
    assert_int_equal(other.nframes, 0);
}

static void test_chains_apart_by_frames_and_wait(void **state)
{
    (void)state;
    const uintptr_t a[] = { 0x101234, 0x102000 }, b[] = { 0x101234, 0x102008 };
    const uintptr_t deep[] = { 1, 2, 3, 4, 5, 6 }, deep_other_tail[] = { 1, 2, 3, 4, 9 };
    block_table_add(&table, a, 2, 1, 10);
    block_table_add(&table, b, 2, 1, 20);
    block_table_add(&table, a, 2, 3, 30); /* the same frames waiting on something else */
    block_table_add(&table, a, 1, 1, 40); /* the call site alone */
    block_table_add(&table, deep, 6, 1, 50);
    block_table_add(&table, deep_other_tail, 5, 1, 60); /* differs past the frames kept: the same chain */
    block_table_add(&table, NULL, 0, 4, -70);           /* no frames; a negative delay counts as none */
    unsigned n = snapshot();
    assert_int_equal(n, 6);
    assert_int_equal(row_of(n, a, 2, 1)->delay_ns, 10);
    assert_int_equal(row_of(n, b, 2, 1)->delay_ns, 20);
    assert_int_equal(row_of(n, a, 2, 3)->delay_ns, 30);
    assert_int_equal(row_of(n, a, 1, 1)->delay_ns, 40);
    const struct block_row *d = row_of(n, deep, BLOCK_SITE_FRAMES, 1);
    assert_non_null(d);
    assert_int_equal(d->count, 2);
    assert_int_equal(d->delay_ns, 110);
    const struct block_row *none = row_of(n, NULL, 0, 4);
    assert_non_null(none);
    assert_int_equal(none->count, 1);
    assert_int_equal(none->delay_ns, 0);
}

/* BLOCK_SITES chains fill it; the next are "other"; the chains in it go on counting. */
static void test_a_full_table_counts_other(void **state)
{
    (void)state;
    for (uintptr_t i = 0; i < BLOCK_SITES; i++) {
        uintptr_t chain[2] = { 0x100000 + 16 * i, 0x200000 };
        block_table_add(&table, chain, 2, 1, 1);
    }
    uintptr_t late[2] = { 0x900000, 0x200000 }, first[2] = { 0x100000, 0x200000 };
    block_table_add(&table, late, 2, 1, 7);
    block_table_add(&table, late, 1, 1, 8);
    block_table_add(&table, first, 2, 1, 5);
    unsigned n = snapshot();
    assert_int_equal(n, BLOCK_SITES);
    assert_null(row_of(n, late, 2, 1));
    assert_int_equal(other.count, 2);
    assert_int_equal(other.delay_ns, 15);
    assert_int_equal(row_of(n, first, 2, 1)->count, 2);
    uint64_t waits = 0;
    for (unsigned i = 0; i < n; i++)
        waits += rows[i].count;
    assert_int_equal(waits, BLOCK_SITES + 1);
    /* a reader with less room: the rows it has room for, every other wait still in "other" */
    assert_int_equal(block_table_snapshot(&table, rows, 10, &other), 10);
    assert_int_equal(other.count, 2);
}

/* An entry another task has claimed but not yet published is passed by -- neither waited for nor read -- and two
 * entries of one chain are one row, their counts added. */
static void test_claimed_entries_and_twins(void **state)
{
    (void)state;
    const uintptr_t chain[] = { 0x104000, 0x105000 };
    block_table_add(&table, chain, 2, 1, 100);
    unsigned at = 0;
    while (atomic_load(&table.sites[at].state) != BLOCK_SITE_READY)
        at++;
    /* the next entry, claimed by a task still writing its key (half of it is this chain's) */
    struct block_site *claimed = &table.sites[(at + 1) % BLOCK_SITES];
    atomic_store(&claimed->state, BLOCK_SITE_CLAIMED);
    claimed->hash = table.sites[at].hash;
    claimed->frames[0] = chain[0];
    /* a twin two entries on: the same chain published by a task that met it at the same moment */
    struct block_site *twin = &table.sites[(at + 2) % BLOCK_SITES];
    *twin = table.sites[at];
    atomic_store(&twin->count, 4);
    atomic_store(&twin->delay_ns, 400);
    block_table_add(&table, chain, 2, 1, 10); /* into the first entry: probes stop at their chain */
    unsigned n = snapshot();
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].count, 6);
    assert_int_equal(rows[0].delay_ns, 510);
    /* a chain whose probe meets the claimed entry goes past it */
    const uintptr_t other_chain[] = { 0x106000 };
    for (int i = 0; i < 3; i++)
        block_table_add(&table, other_chain, 1, 1, 1);
    n = snapshot();
    assert_int_equal(n, 2);
    assert_int_equal(row_of(n, other_chain, 1, 1)->count, 3);
    assert_int_equal(atomic_load(&claimed->state), BLOCK_SITE_CLAIMED);
}

/* ---- four threads at once ------------------------------------------------------------------------------- */

#define THREADS 4
#define WAITS 20000
#define SHARED 8 /* chains every thread uses; each also has 8 of its own */

static void *adder(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (unsigned i = 0; i < WAITS; i++) {
        uintptr_t chain[3] = { 0x110000 + 0x10 * ((i / 2) % SHARED), 0x120000, 0 };
        unsigned n = 2;
        if (i % 2) { /* every other wait in a chain of this thread's own */
            chain[2] = 0x130000 + 0x100 * id + (i / 2) % 8;
            n = 3;
        }
        block_table_add(&table, chain, n, 1, (int64_t)id + 1);
    }
    return NULL;
}

static void test_four_threads_account_for_every_wait(void **state)
{
    (void)state;
    pthread_t threads[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, adder, (void *)i), 0);
    /* snapshots while they add: never a row twice, never more waits than were added */
    for (int look = 0; look < 50; look++) {
        unsigned n = snapshot();
        uint64_t waits = 0;
        for (unsigned i = 0; i < n; i++) {
            waits += rows[i].count;
            for (unsigned j = 0; j < i; j++)
                assert_false(rows[i].nframes == rows[j].nframes &&
                             memcmp(rows[i].frames, rows[j].frames, sizeof rows[i].frames) == 0);
        }
        assert_true(waits <= (uint64_t)THREADS * WAITS);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    unsigned n = snapshot();
    assert_int_equal(n, SHARED + THREADS * 8);
    uint64_t waits = 0, delay = 0;
    for (unsigned i = 0; i < n; i++) {
        waits += rows[i].count;
        delay += rows[i].delay_ns;
    }
    assert_int_equal(waits, (uint64_t)THREADS * WAITS);
    assert_int_equal(delay, (uint64_t)WAITS * (1 + 2 + 3 + 4));
    assert_int_equal(other.count, 0);
    const uintptr_t shared[2] = { 0x110000, 0x120000 };
    assert_int_equal(row_of(n, shared, 2, 1)->count, THREADS * WAITS / 2 / SHARED);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_one_chain_is_one_row, test_chains_apart_by_frames_and_wait, test_a_full_table_counts_other,
               test_claimed_entries_and_twins, test_four_threads_account_for_every_wait)
