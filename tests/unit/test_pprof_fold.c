/* tests/unit/test_pprof_fold.c: the pprof profile's fold (kernel/profiler/pprof_fold.c) over synthetic rings
 * (tests/unit/profiler_fold_fixture.c) -- one key per distinct frames, label set, span, pid, marks and CPU,
 * with counts, weights and let-in lateness summed; addresses kept exactly (no symbol folding); a full table
 * counting what it could not keep; the references it takes to label sets given back when it is destroyed;
 * records of another run left out; the heap given back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/labels.h"
#include "kernel/profiler/pprof_fold.h"
#include "pprof_records.h"
#include "profiler_fold_fixture.h"
#include "unit_main.h"


static struct pprof_fold *fold_run(void)
{
    struct pprof_fold *fold = pprof_fold_create();
    assert_non_null(fold);
    pprof_fold_drain(fold, &run, NULL);
    return fold;
}

static const struct pprof_fold_entry *find(const struct pprof_fold *fold, unsigned cpu, uint32_t pid,
                                           const struct label_set *labels, uint64_t span, uint8_t flags,
                                           const uintptr_t *frames, unsigned n)
{
    for (uint32_t i = 0; i < fold->used; i++) {
        const struct pprof_fold_entry *e = &fold->entries[i];
        if (e->cpu == cpu && e->pid == pid && e->labels == labels && e->span == span && e->flags == flags &&
            e->nframes == n && memcmp(e->frames, frames, n * sizeof *frames) == 0)
            return e;
    }
    return NULL;
}

#define FIND(fold, cpu, pid, labels, span, flags, ...) find((fold), (cpu), (pid), (labels), (span), (flags), FRAMES(__VA_ARGS__))

static void test_one_key_per_distinct_field(void **state)
{
    (void)state;
    const struct label_set *a = set_of("job=a", NULL), *b = set_of("job=b", NULL);
    /* The base key three times, then one change of each field. */
    for (int i = 0; i < 3; i++)
        push_full(0, 5, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));
    push_full(1, 5, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));              /* cpu */
    push_full(0, 6, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));              /* pid */
    push_full(0, 5, run.run, b, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));              /* labels */
    push_full(0, 5, run.run, NULL, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));           /* no labels */
    push_full(0, 5, run.run, a, 9, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));              /* span */
    push_full(0, 5, run.run, a, 0, PROFILE_REC_IRQS_OFF, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10)); /* marks */
    push_full(0, 5, run.run, a, 0, PROFILE_REC_IN_IRQ, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10));
    push_full(0, 5, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 2, MAIN + 0x10));              /* leaf address */
    push_full(0, 5, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x20));              /* caller */
    push_full(0, 5, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 1));                           /* depth */
    push_full(0, 5, run.run, a, 0, 0, 0, 100, FRAMES(SPIN + 1, MAIN + 0x10, RECEIVE + 4));
    struct pprof_fold *fold = fold_run();
    assert_int_equal(fold->used, 12);
    assert_int_equal(fold->samples, 14);
    assert_int_equal(fold->weight, 1400);
    assert_int_equal(fold->not_tracked, 0);
    const struct pprof_fold_entry *base = FIND(fold, 0, 5, a, 0, 0, SPIN + 1, MAIN + 0x10);
    assert_non_null(base);
    assert_ptr_equal(base, &fold->entries[0]); /* first seen first */
    assert_int_equal(base->count, 3);
    assert_int_equal(base->weight, 300);
    assert_non_null(FIND(fold, 1, 5, a, 0, 0, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 6, a, 0, 0, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, b, 0, 0, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, NULL, 0, 0, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, a, 9, 0, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, a, 0, PROFILE_REC_IRQS_OFF, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, a, 0, PROFILE_REC_IN_IRQ, SPIN + 1, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, a, 0, 0, SPIN + 2, MAIN + 0x10));
    assert_non_null(FIND(fold, 0, 5, a, 0, 0, SPIN + 1, MAIN + 0x20));
    assert_non_null(FIND(fold, 0, 5, a, 0, 0, SPIN + 1));
    assert_non_null(FIND(fold, 0, 5, a, 0, 0, SPIN + 1, MAIN + 0x10, RECEIVE + 4));
    pprof_fold_destroy(fold);
    assert_int_equal(live_allocations, 0);
}

/* Weights are the records' periods (0 weighs as 1); a let-in key sums its lateness; flags other than the
 * three marks are not part of the key. */
static void test_weights_and_held_off_summed(void **state)
{
    (void)state;
    push_full(2, 1, run.run, NULL, 0, PROFILE_REC_LET_IN, 40, 1000, FRAMES(MEMCPY + 3));
    push_full(2, 1, run.run, NULL, 0, PROFILE_REC_LET_IN, 60, 2000, FRAMES(MEMCPY + 3));
    push_full(2, 1, run.run, NULL, 0, PROFILE_REC_LET_IN | 0x80, 5, 0, FRAMES(MEMCPY + 3));
    struct pprof_fold *fold = fold_run();
    assert_int_equal(fold->used, 1);
    assert_int_equal(fold->entries[0].count, 3);
    assert_int_equal(fold->entries[0].weight, 3001);
    assert_int_equal(fold->entries[0].held_off_us, 105);
    assert_int_equal(fold->entries[0].flags, PROFILE_REC_LET_IN);
    assert_int_equal(fold->weight, 3001);
    pprof_fold_destroy(fold);
}

/* A record of another run (a straggler) is not folded; one claiming more frames than a record holds is
 * clamped to PROFILE_MAX_FRAMES. */
static void test_straggler_left_out_and_depth_clamped(void **state)
{
    (void)state;
    push_full(0, 1, run.run - 1, NULL, 0, 0, 0, 0, FRAMES(MEMCPY + 1));
    push_full(0, 1, run.run, NULL, 0, 0, 0, 0, FRAMES(1, 2, 3, 4, 5, 6, 7, 8));
    struct profile_record *rec = &rings[0].records[(atomic_load(&rings[0].head) - 1) & rings[0].mask];
    rec->nframes = 200;
    struct pprof_fold *fold = fold_run();
    assert_int_equal(fold->samples, 1);
    assert_int_equal(fold->used, 1);
    assert_int_equal(fold->entries[0].nframes, PROFILE_MAX_FRAMES);
    assert_int_equal(fold->entries[0].frames[7], 8);
    pprof_fold_destroy(fold);
}

/* Past PPROF_FOLD_ENTRIES distinct keys the samples of new keys are counted (and weighed) as not tracked;
 * keys already in the table still count. */
static void test_full_table_counts_what_it_cannot_keep(void **state)
{
    (void)state;
    struct pprof_fold *fold = pprof_fold_create();
    assert_non_null(fold);
    /* Drained as it fills, as the window drains: the rings hold 1024 records each. */
    for (uint32_t i = 0; i < PPROF_FOLD_ENTRIES + 10; i++) {
        push_full(i % NCPUS, 1, run.run, NULL, 0, 0, 0, 7, FRAMES(FILLER + i));
        if (i % 512 == 511)
            pprof_fold_drain(fold, &run, NULL);
    }
    push_full(0, 1, run.run, NULL, 0, 0, 0, 7, FRAMES(FILLER + 0)); /* an old key */
    pprof_fold_drain(fold, &run, NULL);
    assert_int_equal(fold->used, PPROF_FOLD_ENTRIES);
    assert_int_equal(fold->samples, PPROF_FOLD_ENTRIES + 11);
    assert_int_equal(fold->not_tracked, 10);
    assert_int_equal(fold->not_tracked_weight, 70);
    assert_int_equal(fold->entries[0].count, 2);
    uint64_t counted = fold->not_tracked;
    for (uint32_t i = 0; i < fold->used; i++)
        counted += fold->entries[i].count;
    assert_int_equal(counted, fold->samples);
    pprof_fold_destroy(fold);
    assert_int_equal(live_allocations, 0);
}

/* The fold holds one reference to each key's set: a set whose every other reference goes after the drain
 * stays interned until the fold is destroyed. */
static void test_holds_label_sets_until_destroyed(void **state)
{
    (void)state;
    struct label_pair p;
    assert_true(label_parse_pair("req=held-by-pprof", &p));
    const struct label_set *set = label_intern(&p, 1, NULL); /* the test's reference, the only one */
    push_full(0, 1, run.run, set, 0, 0, 0, 0, FRAMES(SPIN + 1));
    push_full(1, 1, run.run, set, 0, 0, 0, 0, FRAMES(SPIN + 1)); /* a second key of the same set */
    push_full(1, 1, run.run, set, 0, 0, 0, 0, FRAMES(SPIN + 1));
    struct pprof_fold *fold = fold_run();
    assert_int_equal(fold->used, 2);
    label_release(set);
    label_reclaim();
    assert_true(label_set_interned(set)); /* the fold's */
    assert_string_equal(fold->entries[1].labels->pairs[0].value, "held-by-pprof");
    pprof_fold_destroy(fold);
    label_reclaim();
    assert_false(label_set_interned(set));
}

static void test_out_of_memory(void **state)
{
    (void)state;
    allocations_fail = true;
    assert_null(pprof_fold_create());
    pprof_fold_destroy(NULL);
    allocations_fail = false;
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_one_key_per_distinct_field, test_weights_and_held_off_summed,
               test_straggler_left_out_and_depth_clamped, test_full_table_counts_what_it_cannot_keep,
               test_holds_label_sets_until_destroyed, test_out_of_memory)
