/* tests/unit/test_profiler_ring.c: the profiler's per-CPU record ring (kernel/profiler.h) -- order, wrap of
 * the slot index, a full ring counting drops without overwriting, free-running indexes across UINT32_MAX,
 * reset, and a ring without storage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/profiler_ring.h"
#include "unit_main.h"

#define CAP 8
static struct profile_record storage[CAP];
static struct profile_ring ring;

/* Produces one record tagged with pid; returns false when the ring refused it. */
static bool produce(struct profile_ring *r, uint32_t pid)
{
    struct profile_record *rec = profile_ring_reserve(r);
    if (!rec)
        return false;
    rec->pid = pid;
    rec->nframes = 1;
    rec->frames[0] = 0x1000 + pid;
    profile_ring_commit(r);
    return true;
}

/* Consumes one record and returns its pid; fails the test when the ring is empty. */
static uint32_t consume(struct profile_ring *r)
{
    const struct profile_record *rec = profile_ring_peek(r);
    assert_non_null(rec);
    uint32_t pid = rec->pid;
    assert_int_equal(rec->frames[0], 0x1000 + pid);
    profile_ring_advance(r);
    return pid;
}

static void test_empty(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, CAP, 0);
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_null(profile_ring_peek(&ring));
    assert_int_equal(profile_ring_drops(&ring), 0);
}

static void test_fifo_order(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, CAP, 0);
    for (uint32_t i = 1; i <= 5; i++)
        assert_true(produce(&ring, i));
    assert_int_equal(profile_ring_count(&ring), 5);
    for (uint32_t i = 1; i <= 5; i++)
        assert_int_equal(consume(&ring), i);
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_null(profile_ring_peek(&ring));
}

static void test_reserve_is_invisible_until_commit(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, CAP, 0);
    struct profile_record *rec = profile_ring_reserve(&ring);
    assert_non_null(rec);
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_null(profile_ring_peek(&ring));
    rec->pid = 3;
    rec->frames[0] = 0x1003;
    profile_ring_commit(&ring);
    assert_int_equal(profile_ring_count(&ring), 1);
    assert_int_equal(consume(&ring), 3);
}

static void test_slot_index_wraps(void **state)
{
    (void)state;
    /* Many times round an 8-slot ring, keeping it partly full, so every slot is reused in turn. */
    profile_ring_init(&ring, storage, CAP, 0);
    uint32_t next_in = 0, next_out = 0;
    for (int round = 0; round < 40; round++) {
        for (int i = 0; i < 5; i++)
            assert_true(produce(&ring, next_in++));
        for (int i = 0; i < 5; i++)
            assert_int_equal(consume(&ring), next_out++);
    }
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_int_equal(profile_ring_drops(&ring), 0);
}

static void test_full_ring_counts_drops_and_keeps_oldest(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, CAP, 0);
    for (uint32_t i = 0; i < CAP; i++)
        assert_true(produce(&ring, i));
    assert_int_equal(profile_ring_count(&ring), CAP);
    for (uint32_t i = 0; i < 3; i++)
        assert_false(produce(&ring, 100 + i));
    assert_int_equal(profile_ring_drops(&ring), 3);
    assert_int_equal(profile_ring_count(&ring), CAP);
    /* Nothing was overwritten: the eight that fitted come out in order. */
    assert_int_equal(consume(&ring), 0);
    /* One slot freed: one more fits, the next is a drop again. */
    assert_true(produce(&ring, 8));
    assert_false(produce(&ring, 9));
    assert_int_equal(profile_ring_drops(&ring), 4);
    for (uint32_t i = 1; i <= 8; i++)
        assert_int_equal(consume(&ring), i);
    assert_null(profile_ring_peek(&ring));
}

static void test_indexes_across_uint32_max(void **state)
{
    (void)state;
    /* Start three short of the wrap of the free-running indexes: head passes UINT32_MAX while records wait. */
    profile_ring_init(&ring, storage, CAP, UINT32_MAX - 2);
    for (uint32_t i = 0; i < 6; i++)
        assert_true(produce(&ring, i));
    assert_int_equal(atomic_load(&ring.head), 3); /* wrapped */
    assert_int_equal(profile_ring_count(&ring), 6);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(consume(&ring), i);
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_int_equal(atomic_load(&ring.tail), 3);
}

static void test_full_detection_across_uint32_max(void **state)
{
    (void)state;
    /* Full with tail just below the wrap and head just past it: head - tail is still the fill. */
    profile_ring_init(&ring, storage, CAP, UINT32_MAX - 3);
    for (uint32_t i = 0; i < CAP; i++)
        assert_true(produce(&ring, i));
    assert_true(atomic_load(&ring.head) < atomic_load(&ring.tail));
    assert_int_equal(profile_ring_count(&ring), CAP);
    assert_false(produce(&ring, 99));
    assert_int_equal(profile_ring_drops(&ring), 1);
    for (uint32_t i = 0; i < CAP; i++)
        assert_int_equal(consume(&ring), i);
    assert_true(produce(&ring, 42));
    assert_int_equal(consume(&ring), 42);
}

static void test_start_at_uint32_max_exactly(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, CAP, UINT32_MAX);
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_true(produce(&ring, 7));
    assert_int_equal(atomic_load(&ring.head), 0);
    assert_int_equal(profile_ring_count(&ring), 1);
    assert_int_equal(consume(&ring), 7);
}

static void test_reset_forgets_records_and_drops(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, CAP, UINT32_MAX - 1);
    for (uint32_t i = 0; i < CAP + 2; i++)
        produce(&ring, i);
    assert_int_equal(profile_ring_drops(&ring), 2);
    profile_ring_reset(&ring);
    assert_int_equal(profile_ring_count(&ring), 0);
    assert_int_equal(profile_ring_drops(&ring), 0);
    assert_null(profile_ring_peek(&ring));
    /* The head is kept (it runs freely); the whole capacity is available again. */
    assert_int_equal(atomic_load(&ring.head), atomic_load(&ring.tail));
    for (uint32_t i = 0; i < CAP; i++)
        assert_true(produce(&ring, 50 + i));
    assert_false(produce(&ring, 60));
    assert_int_equal(consume(&ring), 50);
}

static void test_capacity_one(void **state)
{
    (void)state;
    profile_ring_init(&ring, storage, 1, UINT32_MAX);
    assert_true(produce(&ring, 1));
    assert_false(produce(&ring, 2));
    assert_int_equal(consume(&ring), 1);
    assert_true(produce(&ring, 3));
    assert_int_equal(consume(&ring), 3);
    assert_int_equal(profile_ring_drops(&ring), 1);
}

static void test_ring_without_storage_refuses_without_counting(void **state)
{
    (void)state;
    struct profile_ring empty;
    memset(&empty, 0, sizeof empty);
    assert_null(profile_ring_reserve(&empty));
    assert_int_equal(profile_ring_drops(&empty), 0);
    assert_int_equal(profile_ring_count(&empty), 0);
    assert_null(profile_ring_peek(&empty));
}

static void test_production_size(void **state)
{
    (void)state;
    /* The capacity the kernel uses is a power of two, which the index mask relies on. */
    assert_int_equal(PROFILE_RING_RECORDS & (PROFILE_RING_RECORDS - 1), 0);
    static struct profile_record big[PROFILE_RING_RECORDS];
    struct profile_ring r;
    profile_ring_init(&r, big, PROFILE_RING_RECORDS, UINT32_MAX - 10);
    for (uint32_t i = 0; i < PROFILE_RING_RECORDS; i++)
        assert_true(produce(&r, i));
    assert_false(produce(&r, 0));
    assert_int_equal(profile_ring_drops(&r), 1);
    for (uint32_t i = 0; i < PROFILE_RING_RECORDS; i++)
        assert_int_equal(consume(&r), i);
}

UNIT_MAIN(NULL, NULL,
          test_empty, test_fifo_order, test_reserve_is_invisible_until_commit, test_slot_index_wraps,
          test_full_ring_counts_drops_and_keeps_oldest, test_indexes_across_uint32_max,
          test_full_detection_across_uint32_max, test_start_at_uint32_max_exactly, test_reset_forgets_records_and_drops,
          test_capacity_one, test_ring_without_storage_refuses_without_counting, test_production_size)
