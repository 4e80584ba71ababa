/* tests/unit/test_pprof_encode.c: the pprof encoder (kernel/profiler/pprof_encode.c) over a synthetic fold and
 * the fixture's symbol table (tests/unit/profiler_fold_fixture.c), read back by a small protobuf reader
 * (tests/unit/pprof_reader.h): the string table (index 0 "", no string twice), the sample and period types of the
 * tick and the counter,
 * locations (the leaf's own address, a caller's return address resolved at address - 1, a gap left without a
 * line, one address as leaf and as caller two locations), functions, every label kind, the "[not tracked]"
 * sample, values adding up to the fold, a wall run's types and state labels, and the heap given back on success
 * and on every failure; and the profile gzipped only when that makes it smaller, inflating (zlib) to the very
 * bytes encoded.
 * tests/host/test_pprof_encode.py reads the same encoder's output with pprof's own schema and tools. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "fake_hal.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "pprof_reader.h"
#include "pprof_records.h"
#include "profiler_fold_fixture.h"
#include "unit_main.h"

/* A heap that refuses after a number of allocations: the counting heap's countdown (allocations_after, -1
 * never refuses; n >= 0 grants n more, then refuses). */

/* ---- the synthetic run ------------------------------------------------------------------------------------ */

static const struct pprof_run_info tick_info = {
    .source = "tick", .cycles = false, .period = 10000000, .window_ms = 1500, .ncpus = 4, .ring_drops = 3,
    .build_id = "0123456789abcdef", .time_nanos = 0,
    .memory_start = 0x1000, .memory_limit = 0x10000, .file_offset = 0x2000,
};


static struct profile_read profile;

static void encode(const struct pprof_fold *fold, const struct pprof_run_info *info)
{
    uint8_t *data;
    size_t len;
    assert_true(pprof_encode(fold, info, &tab, &data, &len));
    pprof_read(data, len, &profile);
    kfree(data);
}

/* Every string once, "" first. */
static void expect_string_table_sound(const struct profile_read *r)
{
    assert_true(r->nstrings > 0);
    assert_string_equal(r->strings[0], "");
    for (unsigned i = 0; i < r->nstrings; i++)
        for (unsigned j = i + 1; j < r->nstrings; j++)
            assert_string_not_equal(r->strings[i], r->strings[j]);
}

/* Time profiles of the 10 ms tick: samples/count and what/nanoseconds, the period what/nanoseconds every 10 ms,
 * what the default. */
static void expect_time_types(const struct profile_read *r, const char *what)
{
    assert_int_equal(r->ntypes, 2);
    assert_string_equal(pprof_str(r, r->types[0][0]), "samples");
    assert_string_equal(pprof_str(r, r->types[0][1]), "count");
    assert_string_equal(pprof_str(r, r->types[1][0]), what);
    assert_string_equal(pprof_str(r, r->types[1][1]), "nanoseconds");
    assert_string_equal(pprof_str(r, r->period_type[0]), what);
    assert_string_equal(pprof_str(r, r->period_type[1]), "nanoseconds");
    assert_string_equal(pprof_str(r, r->default_type), what);
    assert_int_equal(r->period, 10000000);
}

static void test_tick_profile(void **state)
{
    (void)state;
    const struct label_set *a = set_of("zone=x", "job=a");
    /* 0: Spin's code called from Main, labelled, with a span that sorts between the keys, three times */
    for (int i = 0; i < 3; i++)
        push_full(2, 7, run.run, a, 42, 0, 0, 10000000, FRAMES(SPIN + 1, MAIN + 0x10));
    /* 1: a return address at the very end of Copy (Copy + size = Receive's start): Copy's call, by addr - 1;
     * and Main + 0x10 this time as a leaf: a location of its own */
    push_full(0, 8, run.run, NULL, 0, PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ, 0, 0, FRAMES(MAIN + 0x10, COPY + 0x100));
    /* 2: a let-in tick in a gap of the text: an address without a line; held off 30 + 12 us */
    push_full(1, 9, run.run, NULL, 0, PROFILE_REC_LET_IN, 30, 20000000, FRAMES(0x1950));
    push_full(1, 9, run.run, NULL, 0, PROFILE_REC_LET_IN, 12, 20000000, FRAMES(0x1950));
    struct pprof_fold *fold = pprof_fold_create();
    pprof_fold_drain(fold, &run, NULL);
    fold->labels_dropped = 5;
    encode(fold, &tick_info);
    const struct profile_read *r = &profile;
    expect_string_table_sound(r);

    expect_time_types(r, "cpu");
    assert_int_equal(r->duration, 1500000000ull);
    assert_int_equal(r->time, 0);

    assert_int_equal(r->nmappings, 1);
    assert_int_equal(r->mapping[1], 1);
    assert_int_equal(r->mapping[2], 0x1000);
    assert_int_equal(r->mapping[3], 0x10000);
    assert_int_equal(r->mapping[4], 0x2000);
    assert_string_equal(pprof_str(r, r->mapping[5]), "kprof.elf");
    assert_string_equal(pprof_str(r, r->mapping[6]), "0123456789abcdef");
    assert_int_equal(r->mapping[7], 0); /* has_functions: false, so pprof given the ELF re-symbolises */

    assert_int_equal(r->nsamples, 3);
    char text[512];
    /* In the drain's order, CPU by CPU: the records of CPU 0, 1, 2. */
    const struct sample_read *s = &r->samples[2];
    assert_int_equal(s->nlocs, 2);
    assert_int_equal(s->nvalues, 2);
    assert_int_equal(s->values[0], 3);
    assert_int_equal(s->values[1], 30000000);
    assert_string_equal(pprof_functions_of(r, s, text, sizeof text), "Spin <- Main");
    assert_int_equal(pprof_location_of(r, s->locs[0])->address, SPIN + 1);
    assert_int_equal(pprof_location_of(r, s->locs[0])->mapping, 1);
    assert_int_equal(pprof_location_of(r, s->locs[1])->address, MAIN + 0x10);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "job=a span=42 zone=x cpu=2 pid=7");

    s = &r->samples[0];
    assert_int_equal(s->values[0], 1);
    assert_int_equal(s->values[1], 1); /* period 0 weighs 1 */
    assert_string_equal(pprof_functions_of(r, s, text, sizeof text), "Main <- NetFrame::Copy");
    assert_int_not_equal(s->locs[0], r->samples[2].locs[1]); /* a leaf and a caller at one address */
    assert_int_equal(pprof_location_of(r, s->locs[0])->address, MAIN + 0x10);
    assert_int_equal(pprof_location_of(r, s->locs[1])->address, COPY + 0x100);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "context=irqs-off context=in-irq cpu=0 pid=8");

    s = &r->samples[1];
    assert_int_equal(s->values[0], 2);
    assert_int_equal(s->values[1], 40000000);
    assert_string_equal(pprof_function_of(r, s->locs[0]), "");
    assert_int_equal(pprof_location_of(r, s->locs[0])->address, 0x1950);
    assert_int_equal(pprof_location_of(r, s->locs[0])->mapping, 1);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text),
                        "context=let-in held_off_us=42 microseconds cpu=1 pid=9");

    /* One function per symbol: Spin, Main, NetFrame::Copy. Five locations: Main + 0x10 twice. */
    assert_int_equal(r->nfunctions, 3);
    assert_int_equal(r->nlocations, 5);
    assert_int_equal(r->ncomments, 4);
    assert_string_equal(pprof_str(r, r->comments[0]),
                        "kprof kernel: source=tick period_ns=10000000 window_ms=1500 cpus=4 samples=6 dropped=3");
    assert_string_equal(pprof_str(r, r->comments[1]),
                        "kprof kernel: folded 3 keys of 4096, not_tracked=0 (samples of keys past a full table)");
    assert_string_equal(pprof_str(r, r->comments[2]),
                        "kprof kernel: labels_dropped=5 (label sets the pool refused, full)");
    assert_string_equal(pprof_str(r, r->comments[3]), "kprof kernel: build_id=0123456789abcdef");
    pprof_fold_destroy(fold);
    assert_int_equal(live_allocations, 0);
}

/* On the counter: cycles/count and its period; an address outside the mapping has no mapping id; the samples of
 * a full table are one "[not tracked]" sample, and the values add up to the fold's. */
static void test_counter_profile_and_not_tracked(void **state)
{
    (void)state;
    struct pprof_fold *fold = pprof_fold_create();
    push_full(3, 1, run.run, NULL, 0, 0, 0, 2000000, FRAMES(0x20000, SPIN + 4));
    pprof_fold_drain(fold, &run, NULL);
    fold->not_tracked = 6;
    fold->not_tracked_weight = 12000000;
    fold->samples += 6;
    fold->weight += 12000000;
    struct pprof_run_info info = tick_info;
    info.cycles = true;
    info.period = 2000000;
    info.source = "pmu/nmi";
    info.build_id = "";
    info.time_nanos = 77;
    encode(fold, &info);
    const struct profile_read *r = &profile;
    expect_string_table_sound(r);
    assert_string_equal(pprof_str(r, r->types[1][0]), "cycles");
    assert_string_equal(pprof_str(r, r->types[1][1]), "count");
    assert_string_equal(pprof_str(r, r->period_type[0]), "cycles");
    assert_int_equal(r->period, 2000000);
    assert_int_equal(r->time, 77);
    assert_int_equal(r->mapping[6], 0); /* no build id: the field left out */
    assert_int_equal(r->nsamples, 2);
    assert_int_equal(pprof_location_of(r, r->samples[0].locs[0])->mapping, 0);
    assert_string_equal(pprof_function_of(r, r->samples[0].locs[1]), "Spin"); /* Spin + 4 as a return address */
    const struct sample_read *s = &r->samples[1];
    assert_int_equal(s->nlocs, 1);
    assert_string_equal(pprof_function_of(r, s->locs[0]), PPROF_NOT_TRACKED);
    assert_int_equal(pprof_location_of(r, s->locs[0])->mapping, 0);
    assert_int_equal(s->nlabels, 0);
    uint64_t count = 0, weight = 0;
    for (unsigned i = 0; i < r->nsamples; i++) {
        count += r->samples[i].values[0];
        weight += r->samples[i].values[1];
    }
    assert_int_equal(count, fold->samples);
    assert_int_equal(weight, fold->weight);
    assert_string_equal(pprof_str(r, r->comments[0]),
                        "kprof kernel: source=pmu/nmi period=2000000 unit=cycles window_ms=1500 cpus=4 samples=7 dropped=3");
    assert_string_equal(pprof_str(r, r->comments[3]), "kprof kernel: build_id=none");
    pprof_fold_destroy(fold);
}

/* A wall run: wall/nanoseconds over the same header and mapping, each sample's value the time its samples stand
 * for; one chain running and the same chain runnable are two samples, a waiting one says on what; the labels and
 * span as the CPU profile has them, no marks; and a comment saying what the profile is. */
static void test_wall_profile(void **state)
{
    (void)state;
    const struct label_set *a = set_of("work=serve", NULL);
    /* pid 7 waits on the timer twice where Main called Spin (a return address first, as the sweep walks it), for
     * 10 and 12 ms; runs in Spin once; is runnable at the same pc once */
    push_wall(1, 7, a, 5, TASK_ACT_WAITING, TASK_WAIT_TIMER, 10000000, FRAMES(SPIN + 4, MAIN + 0x10));
    push_wall(1, 7, a, 5, TASK_ACT_WAITING, TASK_WAIT_TIMER, 12000000, FRAMES(SPIN + 4, MAIN + 0x10));
    push_wall(1, 7, a, 5, TASK_ACT_RUNNING, TASK_WAIT_NONE, 10000000, FRAMES(SPIN + 1, MAIN + 0x10));
    push_wall(1, 7, a, 5, TASK_ACT_RUNNABLE, TASK_WAIT_NONE, 10000000, FRAMES(SPIN + 1, MAIN + 0x10));
    /* pid 8 waits on the network with no labels */
    push_wall(2, 8, NULL, 0, TASK_ACT_WAITING, TASK_WAIT_NET, 10000000, FRAMES(RECEIVE + 0x20));
    struct pprof_fold *fold = pprof_fold_create();
    pprof_fold_drain(fold, &run, NULL);
    assert_int_equal(fold->used, 4);
    struct pprof_run_info info = tick_info;
    info.wall = true;
    encode(fold, &info);
    const struct profile_read *r = &profile;
    expect_string_table_sound(r);
    expect_time_types(r, "wall");
    assert_int_equal(r->nmappings, 1);
    assert_string_equal(pprof_str(r, r->mapping[6]), "0123456789abcdef");

    assert_int_equal(r->nsamples, 4);
    char text[512];
    const struct sample_read *s = &r->samples[0];
    assert_int_equal(s->values[0], 2);
    assert_int_equal(s->values[1], 22000000);
    assert_string_equal(pprof_functions_of(r, s, text, sizeof text), "Spin <- Main");
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text),
                        "span=5 work=serve state=waiting waiting_on=sleep cpu=1 pid=7");
    s = &r->samples[1];
    assert_int_equal(s->values[0], 1);
    assert_int_equal(s->values[1], 10000000);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "span=5 work=serve state=running cpu=1 pid=7");
    assert_int_equal(r->samples[2].locs[0], s->locs[0]); /* one location, two states */
    assert_string_equal(pprof_labels_of(r, &r->samples[2], text, sizeof text),
                        "span=5 work=serve state=runnable cpu=1 pid=7");
    s = &r->samples[3];
    assert_string_equal(pprof_function_of(r, s->locs[0]), "VirtioNet::Receive");
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "state=waiting waiting_on=net cpu=2 pid=8");

    assert_int_equal(r->ncomments, 5);
    assert_string_equal(pprof_str(r, r->comments[0]),
                        "kprof kernel: source=tick period_ns=10000000 window_ms=1500 cpus=4 samples=5 dropped=3");
    assert_string_equal(pprof_str(r, r->comments[1]),
                        "kprof kernel: wall: every task every 10 ms whatever its state (label state=running|runnable|"
                        "waiting, waiting_on=WAIT); a sample's wall/nanoseconds is the time it stands for");
    assert_string_equal(pprof_str(r, r->comments[4]), "kprof kernel: build_id=0123456789abcdef");
    pprof_fold_destroy(fold);
    label_release(a);
    assert_int_equal(live_allocations, 0);
}

static bool encode_tick_profile(const void *fold, uint8_t **data, size_t *len)
{
    return pprof_encode(fold, &tick_info, &tab, data, len);
}

/* Every allocation the encoder makes refused in turn: false, nothing handed over, nothing leaked. */
static void test_out_of_memory_at_every_step(void **state)
{
    (void)state;
    for (int i = 0; i < 40; i++)
        push_full(i % NCPUS, 1, run.run, NULL, 0, 0, 0, 1, FRAMES(FILLER + 7 * i, MAIN + i, RECEIVE + i));
    struct pprof_fold *fold = pprof_fold_create();
    pprof_fold_drain(fold, &run, NULL);
    assert_true(counting_heap_first_success(encode_tick_profile, fold, 64) > 4); /* it did need to grow */
    pprof_fold_destroy(fold);
}

/* zlib's inflate of one gzip member into out; its length. */
static size_t gunzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = z.total_out;
    inflateEnd(&z);
    return n;
}

static void test_gzip_when_it_pays(void **state)
{
    (void)state;
    for (int i = 0; i < 200; i++)
        push_full(i % NCPUS, 1, run.run, NULL, 0, 0, 0, 1, FRAMES(FILLER + 7 * i, MAIN + 0x10, RECEIVE + 0x20));
    struct pprof_fold *fold = pprof_fold_create();
    pprof_fold_drain(fold, &run, NULL);
    uint8_t *data;
    size_t len;
    assert_true(pprof_encode(fold, &tick_info, &tab, &data, &len));
    uint8_t *plain = malloc(len);
    memcpy(plain, data, len);
    size_t plain_len = len;
    int baseline = live_allocations;
    assert_true(pprof_gzip(&data, &len));
    assert_int_equal(live_allocations, baseline);
    assert_true(len < plain_len);
    assert_int_equal(data[0], 0x1f);
    assert_int_equal(data[1], 0x8b);
    uint8_t *back = malloc(plain_len + 1);
    assert_int_equal(gunzip(data, len, back, plain_len + 1), plain_len);
    assert_memory_equal(back, plain, plain_len);
    kfree(data);
    free(back);
    free(plain);

    /* A few bytes that do not shrink: left as they are. */
    uint8_t *tiny = kzalloc(3);
    memcpy(tiny, (const uint8_t[]){ 0x08, 0x96, 0x01 }, 3);
    data = tiny;
    len = 3;
    assert_false(pprof_gzip(&data, &len));
    assert_ptr_equal(data, tiny);
    assert_int_equal(len, 3);
    kfree(tiny);
    /* No scratch, or no room for the output: left as they are, nothing leaked. */
    assert_true(pprof_encode(fold, &tick_info, &tab, &data, &len));
    uint8_t *before = data;
    for (int allow = 0; allow < 2; allow++) {
        allocations_after = allow;
        assert_false(pprof_gzip(&data, &len));
        allocations_after = -1;
        assert_ptr_equal(data, before);
        assert_int_equal(live_allocations, baseline);
    }
    kfree(data);
    pprof_fold_destroy(fold);
    assert_int_equal(live_allocations, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_tick_profile, test_counter_profile_and_not_tracked, test_wall_profile,
               test_out_of_memory_at_every_step,
               test_gzip_when_it_pays)
