/* tests/unit/test_labels_stress.c: the label swap under real concurrency on the host. One thread interns new
 * sets while it swaps a task's label pointer among them (and NULL) as fast as it can; reader threads load the
 * pointer the way the sampler does (task_labels: acquire) and check that every set they see is one the table
 * has published and is whole -- its three pairs agree with each other and its formatted text is exactly what
 * its number says -- never half-written, never something else. Readers must also see the pointer move, or
 * the test proves nothing. Reader failures are counted (cmocka's asserts are for the main thread only). */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/labels.h"
#include "kernel/task.h"
#include "unit_main.h"

#define READERS 3
#define SETS 60            /* interned by the writer while the readers run */
#define SWAPS 400000       /* the writer's stores, at least */
#define INTERN_EVERY (SWAPS / SETS)
#define CHANGES_WANTED 500  /* ... and until every reader has seen the pointer change this often (a reader
                            * time-sliced with the writer on a loaded CPU sees about 70 changes a second) */
#define LIMIT_SECONDS 120   /* ... or this long has passed (then the test fails: the readers saw too little) */

static struct task task;
static atomic_bool writer_done;
static atomic_uint published; /* sets the writer has interned so far */
static pthread_barrier_t start_line;

struct reader_result {
    unsigned long loads, nonnull;
    atomic_ulong changes;     /* read by the writer to know when the readers have seen enough */
    unsigned long bad;        /* sets that were not interned, or not whole */
    char first_bad[160];
    unsigned char seen[SETS]; /* which set numbers this reader saw */
};

/* The pairs of set number i: id=i, sq=i*i, tag=t<i>. Each pair alone is checkable against the others. */
static void pairs_of(unsigned i, struct label_pair p[3])
{
    memset(p, 0, 3 * sizeof *p);
    strcpy(p[0].key, "id");
    snprintf(p[0].value, sizeof p[0].value, "%u", i);
    strcpy(p[1].key, "sq");
    snprintf(p[1].value, sizeof p[1].value, "%u", i * i);
    strcpy(p[2].key, "tag");
    snprintf(p[2].value, sizeof p[2].value, "t%u", i);
}

/* Whether set is a published, whole set of this test; its number in *number. */
static bool set_whole(const struct label_set *set, unsigned *number, char *why, size_t cap)
{
    if (!label_set_interned(set)) {
        snprintf(why, cap, "pointer %p is not an interned set", (const void *)set);
        return false;
    }
    if (set->npairs != 3 || strcmp(set->pairs[0].key, "id") || strcmp(set->pairs[1].key, "sq") ||
        strcmp(set->pairs[2].key, "tag")) {
        snprintf(why, cap, "set %p has the wrong keys (%u pairs)", (const void *)set, set->npairs);
        return false;
    }
    char *end;
    unsigned long i = strtoul(set->pairs[0].value, &end, 10);
    if (*end || i >= SETS) {
        snprintf(why, cap, "set %p has id=%s", (const void *)set, set->pairs[0].value);
        return false;
    }
    char text[LABEL_SET_TEXT_MAX], expected[LABEL_SET_TEXT_MAX];
    snprintf(expected, sizeof expected, "id=%lu,sq=%lu,tag=t%lu", i, i * i, i);
    label_set_format(set, text, sizeof text);
    if (strcmp(text, expected) != 0) {
        snprintf(why, cap, "set %p reads \"%s\", want \"%s\"", (const void *)set, text, expected);
        return false;
    }
    *number = (unsigned)i;
    return true;
}

static void *reader(void *arg)
{
    struct reader_result *r = arg;
    const struct label_set *last = NULL;
    pthread_barrier_wait(&start_line);
    for (;;) {
        bool done = atomic_load_explicit(&writer_done, memory_order_acquire);
        const struct label_set *set = task_labels(&task);
        r->loads++;
        if (set != last)
            atomic_fetch_add_explicit(&r->changes, 1, memory_order_relaxed);
        last = set;
        if (set) {
            r->nonnull++;
            unsigned n;
            char why[160];
            if (set_whole(set, &n, why, sizeof why))
                r->seen[n] = 1;
            else if (r->bad++ == 0)
                snprintf(r->first_bad, sizeof r->first_bad, "%s", why);
        }
        if (done)
            return NULL;
        /* A reader that has seen enough stops competing for a CPU: on two loaded cores, three spinning readers
         * and the writer leave the last reader few moments beside the writer (CI saw 656 changes in 20 s). */
        if (atomic_load_explicit(&r->changes, memory_order_relaxed) >= CHANGES_WANTED && r->loads % 64 == 0) {
            struct timespec nap = { 0, 1000 * 1000 };
            nanosleep(&nap, NULL);
        } else if (r->loads % 4096 == 0) {
            sched_yield(); /* and a hungry one lets the writer in now and then: a change needs the writer to run */
        }
    }
}

static bool readers_satisfied(const struct reader_result *results)
{
    for (int i = 0; i < READERS; i++)
        if (atomic_load_explicit(&results[i].changes, memory_order_relaxed) < CHANGES_WANTED)
            return false;
    return true;
}

static void *writer(void *arg)
{
    const struct reader_result *results = arg;
    const struct label_set *sets[SETS];
    unsigned made = 0;
    uint64_t x = 88172645463325252ull; /* xorshift: which set to publish next */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_barrier_wait(&start_line);
    for (unsigned long s = 0;; s++) {
        if (s >= SWAPS && s % 1024 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (readers_satisfied(results) || now.tv_sec - t0.tv_sec > LIMIT_SECONDS)
                break;
        }
        if (s % INTERN_EVERY == 0 && made < SETS) {
            struct label_pair p[3];
            pairs_of(made, p);
            /* in a rotated order: the table sorts them */
            struct label_pair rotated[3] = { p[(made + 0) % 3], p[(made + 1) % 3], p[(made + 2) % 3] };
            sets[made] = label_intern(rotated, 3, NULL);
            if (!sets[made])
                abort(); /* the table has room for all of them: main checks the count */
            made++;
            atomic_store_explicit(&published, made, memory_order_release);
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned pick = (unsigned)(x % (made + 1));
        task_set_labels(&task, pick == made ? NULL : sets[pick]);
    }
    atomic_store_explicit(&writer_done, true, memory_order_release);
    return NULL;
}

static void test_swaps_seen_by_concurrent_readers_are_whole(void **state)
{
    (void)state;
    assert_true(label_sets_used() + SETS <= LABEL_TABLE_SETS);
    static struct reader_result results[READERS];
    pthread_t readers[READERS], w;
    assert_int_equal(pthread_barrier_init(&start_line, NULL, READERS + 1), 0);
    for (int i = 0; i < READERS; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, reader, &results[i]), 0);
    assert_int_equal(pthread_create(&w, NULL, writer, results), 0);
    assert_int_equal(pthread_join(w, NULL), 0);
    for (int i = 0; i < READERS; i++)
        assert_int_equal(pthread_join(readers[i], NULL), 0);
    pthread_barrier_destroy(&start_line);

    assert_int_equal(atomic_load(&published), SETS);
    unsigned long seen_total = 0;
    for (int i = 0; i < READERS; i++) {
        struct reader_result *r = &results[i];
        if (r->bad)
            fail_msg("reader %d saw %lu bad sets in %lu loads; the first: %s", i, r->bad, r->loads, r->first_bad);
        unsigned distinct = 0;
        for (unsigned n = 0; n < SETS; n++)
            distinct += r->seen[n];
        unsigned long changes = atomic_load(&r->changes);
        print_message("reader %d: %lu loads, %lu with a set, %lu changes seen, %u distinct sets\n", i, r->loads,
                      r->nonnull, changes, distinct);
        /* each reader saw the pointer move among several sets, or it tested nothing */
        assert_true(changes >= CHANGES_WANTED);
        assert_true(distinct >= 3);
        seen_total += r->nonnull;
    }
    assert_true(seen_total > 0);

    /* afterwards, every set the writer made is still there and whole */
    for (unsigned i = 0; i < SETS; i++) {
        struct label_pair p[3];
        pairs_of(i, p);
        const struct label_set *set = label_intern(p, 3, NULL);
        unsigned n;
        char why[160];
        assert_non_null(set);
        if (!set_whole(set, &n, why, sizeof why))
            fail_msg("after the run: %s", why);
        assert_int_equal(n, i);
    }
}

/* The checker itself must be able to fail: a set that is not in the table, and one whose pairs disagree. */
static void test_checker_rejects_foreign_and_inconsistent_sets(void **state)
{
    (void)state;
    char why[160];
    unsigned n;
    struct label_set forged;
    struct label_pair p[3];
    pairs_of(1, p);
    memset(&forged, 0, sizeof forged);
    forged.npairs = 3;
    memcpy(forged.pairs, p, sizeof p);
    assert_false(set_whole(&forged, &n, why, sizeof why));
    assert_non_null(strstr(why, "not an interned set"));
    strcpy(p[1].value, "5"); /* sq disagrees with id */
    const struct label_set *odd = label_intern(p, 3, NULL);
    assert_non_null(odd);
    assert_false(set_whole(odd, &n, why, sizeof why));
    assert_non_null(strstr(why, "want \"id=1,sq=1,tag=t1\""));
}

UNIT_MAIN(NULL, NULL,
          test_checker_rejects_foreign_and_inconsistent_sets, test_swaps_seen_by_concurrent_readers_are_whole)
