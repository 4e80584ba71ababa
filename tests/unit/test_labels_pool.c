/* tests/unit/test_labels_pool.c: the label-set pool's reclamation (kernel/labels.c) against scripted readers --
 * a fake profiler whose samplers can be inside a sample and whose rings can hold undrained records: a set is
 * freed after its last reference, and only once every sampler inside a sample at the batch's close has left
 * and the records written by then are drained; a freed slot is reused; a retired set revived before that is
 * the same set; pinned sets are never freed; a full pool counts what it refuses; the task's pointer moves
 * references. The real sample path's side of the race is tests/unit/test_profiler_labels.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/labels.h"
#include "kernel/task.h"
#include "unit_main.h"

/* ---- the scripted readers: one sampler word and one ring ------------------------------------------------ */

static uint32_t sampler;      /* odd while a sample is inside */
static uint32_t head, tail;   /* the ring: records [tail, head) are undrained */
static unsigned mark_calls;

static void samplers_mark(uint32_t *marks)
{
    marks[0] = sampler;
    mark_calls++;
}
static bool samplers_passed(const uint32_t *marks)
{
    return !(marks[0] & 1) || sampler != marks[0];
}
static void records_mark(uint32_t *marks)
{
    marks[1] = head;
}
static bool records_passed(const uint32_t *marks)
{
    return (int32_t)(tail - marks[1]) >= 0;
}
static const struct label_readers scripted = { samplers_mark, samplers_passed, records_mark, records_passed };

static void sample_enter(void) { sampler++; }
static void sample_commit(void) { head++; sampler++; }
static void drain(void) { tail = head; }

static int setup(void **state)
{
    (void)state;
    sampler = head = tail = 0;
    label_set_readers(&scripted);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sampler = 0;
    tail = head;
    label_reclaim(); /* nothing a test left retired stays for the next */
    label_set_readers(NULL);
    return 0;
}

static struct label_stats stats(void)
{
    struct label_stats s;
    label_stats(&s);
    return s;
}

/* ---- the tests ------------------------------------------------------------------------------------------ */

/* No reader holds anything: the last reference frees the set at once, and its slot is reused. */
static void test_free_after_last_reference_and_reuse(void **state)
{
    (void)state;
    unsigned used = label_sets_used();
    const struct label_set *a = label_intern_one("req", "a1", NULL);
    label_hold(a);
    assert_int_equal(label_sets_used(), used + 1);
    label_release(a);
    assert_true(label_set_interned(a)); /* one reference left */
    uint64_t freed = stats().freed;
    label_release(a);
    assert_false(label_set_interned(a));
    assert_int_equal(label_sets_used(), used);
    assert_int_equal(stats().freed, freed + 1);
    const struct label_set *b = label_intern_one("req", "b1", NULL);
    assert_ptr_equal(b, a); /* the first free slot: a's */
    assert_string_equal(b->pairs[0].value, "b1");
    label_release(b);
}

/* A sampler inside a sample when the set is retired may hold it: not freed until it has left, and then not
 * until the records written by then are drained. */
static void test_waits_for_the_sampler_then_the_records(void **state)
{
    (void)state;
    struct task t;
    memset(&t, 0, sizeof t);
    const struct label_set *s = label_intern_one("req", "s1", NULL);
    task_set_labels(&t, s);
    label_release(s); /* the task's reference is the only one */

    sample_enter();                 /* a sample loads the task's pointer: s */
    const struct label_set *seen = task_labels(&t);
    task_set_labels(&t, NULL);      /* another CPU swaps it away: the last reference goes */
    assert_true(label_set_interned(s));
    assert_int_equal(stats().waiting, 1);
    label_reclaim();
    assert_true(label_set_interned(s)); /* the sampler is still inside */
    sample_commit();                /* its record, holding s, is in the ring */
    label_reclaim();
    assert_true(label_set_interned(s)); /* the record is undrained */
    assert_string_equal(seen->pairs[0].value, "s1");
    sample_enter();                 /* a new sample: it cannot see s, and does not hold it up */
    drain();
    label_reclaim();
    assert_false(label_set_interned(s));
    assert_int_equal(stats().waiting, 0);
    sample_commit();
}

/* A sample that enters after the batch closed found the new pointer: it never delays the free. */
static void test_a_later_sampler_does_not_delay(void **state)
{
    (void)state;
    const struct label_set *s = label_intern_one("req", "s2", NULL);
    head = 5; /* records of earlier sets, drained */
    tail = 5;
    label_release(s); /* retired and, with the sampler outside and the ring drained, freed */
    assert_false(label_set_interned(s));
    const struct label_set *r = label_intern_one("req", "s3", NULL);
    sample_enter();
    sample_enter(); /* odd again only if another sampler word; here: even, a completed sample */
    label_release(r);
    assert_false(label_set_interned(r));
}

/* Retired, then asked for again before its grace periods end: the same set, live, not freed under it. */
static void test_revived_before_it_is_freed(void **state)
{
    (void)state;
    const struct label_set *s = label_intern_one("req", "r1", NULL);
    sample_enter();
    label_release(s);
    assert_int_equal(stats().waiting, 1);
    const struct label_set *again = label_intern_one("req", "r1", NULL);
    assert_ptr_equal(again, s);
    assert_int_equal(stats().waiting, 0);
    sample_commit();
    drain();
    label_reclaim();
    assert_true(label_set_interned(s)); /* live: the grace periods freed nothing */
    label_release(again);
    assert_false(label_set_interned(s));
}

/* A set retired while a batch is in its grace periods waits for a batch of its own. */
static void test_a_set_retired_later_waits_for_its_own_batch(void **state)
{
    (void)state;
    const struct label_set *a = label_intern_one("req", "a2", NULL);
    const struct label_set *b = label_intern_one("req", "b2", NULL);
    sample_enter();
    label_release(a); /* batch 1 closes: the sampler is inside */
    sample_commit();
    label_reclaim();  /* batch 1 now waits for the record */
    sample_enter();   /* a second sample, which loaded b */
    label_release(b);
    drain();          /* the first record drained: batch 1 done; b waits for the second sample */
    label_reclaim();
    assert_false(label_set_interned(a));
    assert_true(label_set_interned(b));
    sample_commit();
    label_reclaim();
    assert_true(label_set_interned(b)); /* its record undrained */
    drain();
    label_reclaim();
    assert_false(label_set_interned(b));
}

/* Pinned sets are never freed, however their references go. */
static void test_pinned_sets_stay(void **state)
{
    (void)state;
    const struct label_set *p = label_intern_pinned("cmd", "pinned-one", NULL);
    unsigned pinned = stats().pinned;
    label_release(p);
    label_release(p);
    assert_true(label_set_interned(p));
    assert_ptr_equal(label_intern_one("cmd", "pinned-one", NULL), p);
    assert_int_equal(stats().pinned, pinned);
}

/* A full pool: refused, counted; retired sets that wait are counted as taking their slots; once the
 * readers pass, there is room again. */
static void test_full_pool_counts_and_recovers(void **state)
{
    (void)state;
    static const struct label_set *held[LABEL_TABLE_SETS];
    unsigned n = 0;
    char value[16];
    const struct label_set *cmd = label_intern_pinned("cmd", "uptime", NULL); /* as the shell does at boot */
    label_release(cmd);
    while (label_sets_used() < LABEL_TABLE_SETS) {
        snprintf(value, sizeof value, "f%u", n);
        held[n] = label_intern_one("fill", value, NULL);
        assert_non_null(held[n++]);
    }
    struct label_stats before = stats();
    const char *why = NULL;
    assert_null(label_intern_one("fill", "extra", &why));
    assert_string_equal(why, "label set table full (255 sets in use or waiting to be freed)");
    assert_int_equal(stats().dropped, before.dropped + 1);
    /* the shell's cmd= set is there however full the pool is: the command's label never stops */
    const struct label_set *again = label_intern_one("cmd", "uptime", NULL);
    assert_ptr_equal(again, cmd);
    label_release(again);
    assert_int_equal(stats().dropped, before.dropped + 1);

    sample_enter(); /* a sample may hold held[0] */
    label_release(held[0]);
    assert_int_equal(stats().waiting, 1);
    assert_int_equal(stats().used, LABEL_TABLE_SETS);
    assert_null(label_intern_one("fill", "extra", NULL)); /* still full: the slot waits */
    assert_int_equal(stats().dropped, before.dropped + 2);
    char text[256];
    struct label_stats s = stats();
    label_stats_format(&s, text, sizeof text);
    char expected[256];
    snprintf(expected, sizeof expected, "label sets: 255 of 255 in use (254 live, %u of them pinned cmd= sets, 1 "
             "waiting to be freed), %llu made, %llu freed, %llu dropped (table full)", s.pinned,
             (unsigned long long)s.made, (unsigned long long)s.freed, (unsigned long long)s.dropped);
    assert_string_equal(text, expected);

    sample_commit();
    drain();
    const struct label_set *extra = label_intern_one("fill", "extra", NULL);
    assert_ptr_equal(extra, held[0]); /* its slot, freed by the intern's own reclaim */
    label_release(extra);
    for (unsigned i = 1; i < n; i++)
        label_release(held[i]);
    assert_int_equal(stats().waiting, 0);
}

/* The task's pointer holds a reference; task_replace_labels moves them only when it swaps. */
static void test_task_pointer_references(void **state)
{
    (void)state;
    struct task t;
    memset(&t, 0, sizeof t);
    const struct label_set *a = label_intern_one("req", "ta", NULL);
    const struct label_set *b = label_intern_one("req", "tb", NULL);
    task_set_labels(&t, a);
    label_release(a);
    assert_true(label_set_interned(a)); /* the task's */
    const struct label_set *held = task_labels_hold(&t);
    assert_ptr_equal(held, a);
    assert_false(task_replace_labels(&t, b, NULL)); /* not what it holds: nothing moves */
    assert_true(task_replace_labels(&t, a, b));
    assert_true(label_set_interned(a)); /* still held */
    label_release(held);
    assert_false(label_set_interned(a));
    label_release(b);
    assert_true(label_set_interned(b)); /* the task's */
    char text[64];
    task_labels_format(&t, text, sizeof text);
    assert_string_equal(text, "req=tb");
    task_set_labels(&t, NULL);
    assert_false(label_set_interned(b));
    task_set_span(&t, 99);
    assert_int_equal(task_span(&t), 99);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_free_after_last_reference_and_reuse, test_waits_for_the_sampler_then_the_records,
               test_a_later_sampler_does_not_delay, test_revived_before_it_is_freed,
               test_a_set_retired_later_waits_for_its_own_batch, test_pinned_sets_stay,
               test_full_pool_counts_and_recovers, test_task_pointer_references)
