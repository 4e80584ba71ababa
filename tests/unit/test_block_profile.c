/* tests/unit/test_block_profile.c: the profiles of a block table (kernel/profiler/block_profile.c) over a table of
 * the test's own and a small image -- a snapshot taken at the fake clock's time; the difference of two (a chain
 * with no wait between them dropped, a new one whole, "other" less its earlier count); and the pprof it encodes,
 * read back by tests/unit/pprof_reader.h: contentions/count and delay/nanoseconds, period 1 contention, delay the
 * default, the duration asked, the kernel's mapping, every frame a return address (the call site first), for the
 * block kind the wait as label `waiting_on` and its words in the first comment, for the lock kind (the mutex
 * profile) no label and its own words, the chains past a full table one "[other]" sample and a chain with no
 * frames one "[no frames]" sample, the values adding up to the table's; the rows sorted most delay first (most
 * count among equals); Go's debug=1 text of either kind, sorted, "[other]" last; every allocation refused in turn
 * handled with nothing leaked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "counting_heap.h"
#include "fake_hal.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler/block_profile.h"
#include "kernel/task.h"
#include "pprof_reader.h"
#include "unit_main.h"
#include "wait_serve_image.h"

/* The image (tests/unit/wait_serve_image.h): Wait, Serve and Loop. */
static const struct pprof_mapping mapping = { 0x1000, 0x2000, 0x3000, "" };

static struct block_table table;
static struct profile_read profile;

static const uintptr_t sleep_chain[] = { SERVE + 0x20, LOOP + 0x10 };
static const uintptr_t net_chain[] = { LOOP + 0x40 };
/* A call to a function that never returns as Serve's last instruction: its return address is Loop's first byte,
 * and it names Serve, the call before it. */
static const uintptr_t edge_chain[] = { LOOP, LOOP + 0x80 };

static int setup(void **state)
{
    (void)state;
    memset(&table, 0, sizeof table);
    counting_heap_reset();
    fake_time_ns = 5000000000ll;
    return 0;
}

static void encode_as(const struct block_snapshot *s, const struct block_profile_kind *kind, uint64_t duration_ns)
{
    uint8_t *data;
    size_t len;
    assert_true(block_profile_encode(s, kind, duration_ns, &tab, &mapping, &data, &len));
    pprof_read(data, len, &profile);
    kfree(data);
}

static void encode(const struct block_snapshot *s, uint64_t duration_ns)
{
    encode_as(s, &block_profile_waits, duration_ns);
}

static void test_since_boot(void **state)
{
    (void)state;
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_TIMER, 10000000);
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_TIMER, 30000000);
    block_table_add(&table, net_chain, 1, TASK_WAIT_NET, 10000000000ll);
    block_table_add(&table, edge_chain, 2, TASK_WAIT_TASK, 5);
    block_table_add(&table, NULL, 0, TASK_WAIT_TASK, 6);
    atomic_store(&table.other_count, 3);
    atomic_store(&table.other_delay_ns, 900);
    struct block_snapshot s;
    assert_true(block_snapshot_take(&table, &s));
    assert_int_equal(s.taken_ns, 5000000000ll);
    assert_int_equal(s.count, 4);
    encode(&s, (uint64_t)s.taken_ns);
    block_snapshot_free(&s);

    const struct profile_read *r = &profile;
    assert_int_equal(r->ntypes, 2);
    assert_string_equal(pprof_str(r, r->types[0][0]), "contentions");
    assert_string_equal(pprof_str(r, r->types[0][1]), "count");
    assert_string_equal(pprof_str(r, r->types[1][0]), "delay");
    assert_string_equal(pprof_str(r, r->types[1][1]), "nanoseconds");
    assert_string_equal(pprof_str(r, r->period_type[0]), "contentions");
    assert_int_equal(r->period, 1);
    assert_string_equal(pprof_str(r, r->default_type), "delay");
    assert_int_equal(r->duration, 5000000000ull);
    assert_int_equal(r->mapping[6], 0); /* no build id */
    assert_string_equal(pprof_str(r, r->comments[0]), block_profile_waits.counted);
    assert_string_equal(pprof_str(r, r->comments[1]),
                        "kprof kernel: chains=4 of 256, other=3 contentions (chains past a full table)");

    assert_int_equal(r->nsamples, 5);
    uint64_t waits = 0, delay = 0;
    bool seen[5] = { false };
    char text[256];
    for (unsigned i = 0; i < r->nsamples; i++) {
        const struct sample_read *smp = &r->samples[i];
        assert_int_equal(smp->nvalues, 2);
        waits += smp->values[0];
        delay += smp->values[1];
        const char *leaf = pprof_function_of(r, smp->locs[0]);
        pprof_labels_of(r, smp, text, sizeof text);
        if (smp->nlocs == 2 && strcmp(leaf, "Serve") == 0 && smp->values[0] == 2) {
            assert_int_equal(smp->values[1], 40000000);
            assert_int_equal(pprof_location_of(r, smp->locs[0])->address, SERVE + 0x20);
            assert_string_equal(pprof_function_of(r, smp->locs[1]), "Loop");
            assert_string_equal(text, "waiting_on=sleep");
            seen[0] = true;
        } else if (smp->nlocs == 1 && strcmp(leaf, "Loop") == 0) {
            assert_int_equal(smp->values[1], 10000000000ull);
            assert_string_equal(text, "waiting_on=net");
            seen[1] = true;
        } else if (smp->nlocs == 2 && strcmp(leaf, "Serve") == 0) {
            assert_int_equal(pprof_location_of(r, smp->locs[0])->address, LOOP); /* a return address: Serve's call */
            assert_string_equal(text, "waiting_on=task");
            seen[2] = true;
        } else if (strcmp(leaf, BLOCK_PROFILE_NO_FRAMES) == 0) {
            assert_int_equal(smp->values[1], 6);
            assert_string_equal(text, "");
            seen[3] = true;
        } else {
            assert_string_equal(leaf, BLOCK_PROFILE_OTHER);
            assert_int_equal(smp->nlocs, 1);
            assert_int_equal(pprof_location_of(r, smp->locs[0])->mapping, 0);
            assert_int_equal(smp->values[0], 3);
            assert_int_equal(smp->values[1], 900);
            seen[4] = true;
        }
    }
    for (unsigned i = 0; i < 5; i++)
        assert_true(seen[i]);
    assert_int_equal(waits, 2 + 1 + 1 + 1 + 3);
    assert_int_equal(delay, 40000000 + 10000000000ull + 5 + 6 + 900);
    assert_int_equal(live_allocations, 0);
}

static void test_over_seconds(void **state)
{
    (void)state;
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_TIMER, 10);
    block_table_add(&table, edge_chain, 2, TASK_WAIT_TASK, 20);
    atomic_store(&table.other_count, 1);
    atomic_store(&table.other_delay_ns, 100);
    struct block_snapshot earlier, later;
    assert_true(block_snapshot_take(&table, &earlier));
    fake_time_ns += 2000000000;
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_TIMER, 15);
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_TIMER, 25);
    block_table_add(&table, net_chain, 1, TASK_WAIT_NET, 9000000000ll);
    atomic_fetch_add(&table.other_count, 2);
    atomic_fetch_add(&table.other_delay_ns, 50);
    assert_true(block_snapshot_take(&table, &later));
    block_snapshot_subtract(&later, &earlier);
    assert_int_equal(later.count, 2); /* the edge chain had no wait between the two */
    for (unsigned i = 0; i < later.count; i++) {
        if (later.rows[i].nframes == 2) {
            assert_int_equal(later.rows[i].count, 2);
            assert_int_equal(later.rows[i].delay_ns, 40);
        } else {
            assert_int_equal(later.rows[i].count, 1);
            assert_int_equal(later.rows[i].delay_ns, 9000000000ull);
        }
    }
    assert_int_equal(later.other.count, 2);
    assert_int_equal(later.other.delay_ns, 50);
    encode(&later, (uint64_t)(later.taken_ns - earlier.taken_ns));
    assert_int_equal(profile.duration, 2000000000ull);
    assert_int_equal(profile.nsamples, 3);
    block_snapshot_free(&earlier);
    block_snapshot_free(&later);
    assert_int_equal(live_allocations, 0);
}

/* The lock table's kind: the same samples, no label, its own words. */
static void test_the_lock_kind_labels_nothing(void **state)
{
    (void)state;
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_NONE, 700);
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_NONE, 300);
    block_table_add(&table, net_chain, 1, TASK_WAIT_NONE, 5);
    struct block_snapshot s;
    assert_true(block_snapshot_take(&table, &s));
    encode_as(&s, &block_profile_spins, 1000);
    block_snapshot_free(&s);
    const struct profile_read *r = &profile;
    assert_string_equal(pprof_str(r, r->types[0][0]), "contentions");
    assert_string_equal(pprof_str(r, r->types[1][1]), "nanoseconds");
    assert_string_equal(pprof_str(r, r->comments[0]), block_profile_spins.counted);
    assert_non_null(strstr(pprof_str(r, r->comments[0]), "spinlock"));
    assert_int_equal(r->nsamples, 2);
    char text[64];
    for (unsigned i = 0; i < r->nsamples; i++) {
        pprof_labels_of(r, &r->samples[i], text, sizeof text);
        assert_string_equal(text, "");
        bool serve = strcmp(pprof_function_of(r, r->samples[i].locs[0]), "Serve") == 0;
        assert_int_equal(r->samples[i].values[0], serve ? 2 : 1);
        assert_int_equal(r->samples[i].values[1], serve ? 1000 : 5);
    }
    assert_int_equal(live_allocations, 0);
}

/* No acquisition waited: the mutex profile has its types and no sample at all. */
static void test_no_contention_is_an_empty_profile(void **state)
{
    (void)state;
    struct block_snapshot s;
    assert_true(block_snapshot_take(&table, &s));
    assert_int_equal(s.count, 0);
    encode_as(&s, &block_profile_spins, 1000);
    block_snapshot_free(&s);
    assert_string_equal(pprof_str(&profile, profile.types[0][0]), "contentions");
    assert_int_equal(profile.nsamples, 0);
}

static void test_sort_puts_most_delay_first(void **state)
{
    (void)state;
    const uintptr_t a[] = { SERVE + 0x20 }, b[] = { SERVE + 0x30 }, c[] = { LOOP + 0x10 };
    block_table_add(&table, a, 1, 0, 10);
    block_table_add(&table, b, 1, 0, 50);
    block_table_add(&table, c, 1, 0, 5);
    block_table_add(&table, c, 1, 0, 5); /* c: 10 as a, in two waits: before a */
    struct block_snapshot s;
    assert_true(block_snapshot_take(&table, &s));
    block_snapshot_sort(&s);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.rows[0].frames[0], b[0]);
    assert_int_equal(s.rows[1].frames[0], c[0]);
    assert_int_equal(s.rows[2].frames[0], a[0]);
    block_snapshot_free(&s);
}

static void test_text_is_gos_contention_text(void **state)
{
    (void)state;
    block_table_add(&table, net_chain, 1, TASK_WAIT_NONE, 5);
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_NONE, 700);
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_NONE, 300);
    block_table_add(&table, (const uintptr_t[]){ 0x9 }, 1, TASK_WAIT_NONE, 1); /* outside the image */
    atomic_store(&table.other_count, 4);
    atomic_store(&table.other_delay_ns, 44);
    struct block_snapshot s;
    assert_true(block_snapshot_take(&table, &s));
    char buf[1024];
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, sizeof buf);
    block_profile_text(&bs.sink, &s, &block_profile_spins, &tab);
    buf[bs.len] = 0;
    char want[512];
    snprintf(want, sizeof want,
             "--- mutex:\ncycles/second=1000000000\nsampling period=1\n"
             "1000 2 @ %#lx %#lx\n#\t%#lx\tServe+0x20\n#\t%#lx\tLoop+0x10\n"
             "5 1 @ %#lx\n#\t%#lx\tLoop+0x40\n"
             "1 1 @ 0x9\n#\t0x9\n"
             "44 4 @\n",
             (unsigned long)sleep_chain[0], (unsigned long)sleep_chain[1], (unsigned long)sleep_chain[0],
             (unsigned long)sleep_chain[1], (unsigned long)net_chain[0], (unsigned long)net_chain[0]);
    assert_string_equal(buf, want);
    buffer_sink_init(&bs, buf, sizeof buf);
    block_profile_text(&bs.sink, &s, &block_profile_waits, &tab);
    buf[bs.len] = 0;
    assert_true(strncmp(buf, "--- contention:\n", 16) == 0);
    block_snapshot_free(&s);
    assert_int_equal(live_allocations, 0);
}

static bool encode_snapshot(const void *s, uint8_t **data, size_t *len)
{
    return block_profile_encode(s, &block_profile_waits, 1, &tab, &mapping, data, len);
}

static void test_out_of_memory_at_every_step(void **state)
{
    (void)state;
    block_table_add(&table, sleep_chain, 2, TASK_WAIT_TIMER, 10);
    block_table_add(&table, net_chain, 1, TASK_WAIT_NET, 10);
    struct block_snapshot s;
    allocations_after = 0;
    assert_false(block_snapshot_take(&table, &s));
    allocations_after = -1;
    assert_true(block_snapshot_take(&table, &s));
    counting_heap_first_success(encode_snapshot, &s, 32);
    block_snapshot_free(&s);
    assert_int_equal(live_allocations, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL, test_since_boot, test_over_seconds, test_the_lock_kind_labels_nothing,
               test_no_contention_is_an_empty_profile, test_sort_puts_most_delay_first, test_text_is_gos_contention_text, test_out_of_memory_at_every_step)
