/* tests/unit/test_profiler_labels.c: the race the label pool's readers exist for, on the real sample path
 * (kernel/profiler.c) and the fake CPU. A sample has loaded its task's label set and is still walking the
 * stack when another CPU swaps the task's set and gives back the last reference: the set must not be freed
 * then (the sampler is inside), nor after the sample commits (its record is undrained), but once the record is
 * drained it is -- and the record read it whole. On the tick and on a counter's NMI; and a ring reset at the
 * next start frees what undrained records held; records copied into the window's capture keep their sets until
 * the fold holds them. The other CPU's moves run inside the sample, from the stack
 * walk's call for the task's stack bounds, which comes after the load of the task's pointer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/pmu_backend.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "fake_kernel.h"
#include "hal/pmu.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/capture.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/run.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "unit_main.h"

/* Tasks, their stacks, the walk (pc alone) and the stop's sleep (a tick on each CPU, at fake_tick_pc) are
 * the fake kernel's (tests/unit/fake_kernel.c); the text is this file's. */
static unsigned char text[64];
static struct symtab tab;

/* The other CPU, inside the sample (the fake kernel's task_stack_bounds hook): swap the task's set for `next`,
 * which gives back the last reference to the old one, and let the pool reclaim what it can. */
static const struct label_set *next;
static bool race_armed;
static bool held_while_inside; /* the old set was still in the pool when the swap and the reclaim were done */
static const struct label_set *swapped_out;

static void other_cpu_swaps(const struct task *task)
{
    if (race_armed) {
        race_armed = false;
        swapped_out = task_labels(task);
        task_set_labels((struct task *)task, next);
        label_reclaim();
        held_while_inside = label_set_interned(swapped_out);
    }
}

void *kmalloc(size_t size) { return malloc(size); }
void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *p) { free(p); }

static struct context busy_ctx(uint64_t vector)
{
    return fake_interrupt((uintptr_t)&text[16], vector);
}

static bool nmi_path(void)
{
    struct context ctx = busy_ctx(2);
    return profiler_nmi(&ctx, fake_cycles);
}

static void tick(unsigned cpu)
{
    struct context ctx = busy_ctx(0xE0);
    fake_cpu_index = cpu;
    profiler_tick(&ctx);
}

static void overflow(unsigned cpu)
{
    fake_cpu_index = cpu;
    uint64_t period = pmu_period_cycles();
    fake_advance(period);
    fake_cycles += period;
}

static void boot(void (*model)(void))
{
    fake_boot(model, nmi_path);
    fake_symtab = &tab;
    fake_tick_pc = (uintptr_t)&text[16];
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        task_set_labels(&fake_task[i], NULL); /* the references the last test's tasks held */
    fake_tasks_reset(10);
    fake_stack_bounds_hook = other_cpu_swaps;
}

/* The set req=value, given to cpu's task, whose reference is then the last. */
static const struct label_set *task_holds_the_last_reference(unsigned cpu, const char *value)
{
    const struct label_set *s = label_intern_one("req", value, NULL);
    task_set_labels(&fake_task[cpu], s);
    label_release(s);
    return s;
}

/* What the drain saw of cpu 1's records: their sets' text, read during the take. */
static char seen[8][LABEL_SET_TEXT_MAX];
static unsigned nseen;
static void take(void *arg, const struct profile_record *rec)
{
    (void)arg;
    if (rec->cpu == 1 && nseen < 8)
        label_set_format(rec->labels, seen[nseen++], sizeof seen[0]);
}

/* One sample of cpu 1 through `sample`, with the other CPU's swap inside it; then the drain. */
static void released_while_sampled(void (*sample)(unsigned cpu), bool counter)
{
    const struct label_set *s = task_holds_the_last_reference(1, "inside");
    next = label_intern_one("req", "after", NULL);

    struct profile_run run = { 0 };
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    assert_int_equal(pmu_usable(), counter);
    tick(1); /* the tick's first sample (drained below), or the arming tick */
    nseen = 0;
    profiler_drain(&run, NULL, take, NULL);

    race_armed = true;
    held_while_inside = false;
    sample(1);
    assert_false(race_armed); /* the swap ran, inside the sample */
    assert_ptr_equal(swapped_out, s);
    label_release(next); /* the task holds it now */
    assert_true(held_while_inside);                  /* not freed while the sampler held it */
    label_reclaim();
    assert_true(label_set_interned(s));              /* nor while its record is undrained */
    assert_int_equal(profile_ring_count(&run.rings[1]), 1);

    nseen = 0;
    profiler_drain(&run, NULL, take, NULL); /* reclaims at its end */
    assert_int_equal(nseen, 1);
    assert_string_equal(seen[0], "req=inside");      /* the record read its set whole */
    assert_false(label_set_interned(s));             /* and now it is free */

    sample(1); /* the next sample carries the new set */
    nseen = 0;
    profiler_drain(&run, NULL, take, NULL);
    assert_int_equal(nseen, 1);
    assert_string_equal(seen[0], "req=after");
    profiler_stop(&run);
    profiler_release();
    task_set_labels(&fake_task[1], NULL);
    assert_false(label_set_interned(next));
}

static void test_released_while_the_tick_samples(void **state)
{
    (void)state;
    boot(fake_model_no_pmu);
    released_while_sampled(tick, false);
}

static void test_released_while_the_nmi_samples(void **state)
{
    (void)state;
    boot(fake_model_intel_v2);
    released_while_sampled(overflow, true);
}

/* Records never drained (the run ended with them in the ring, or a straggler's): the next start's reset
 * discards them unread, and the set they held is freed then. */
static void test_a_reset_frees_what_undrained_records_held(void **state)
{
    (void)state;
    boot(fake_model_no_pmu);
    const struct label_set *s = task_holds_the_last_reference(2, "undrained");
    struct profile_run run = { 0 };
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    tick(2);
    tick(2);
    task_set_labels(&fake_task[2], NULL);
    label_reclaim();
    assert_true(label_set_interned(s)); /* two records hold it */
    assert_int_equal(profile_ring_count(&run.rings[2]), 2);
    profiler_release(); /* given up without a drain */
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    label_reclaim();
    assert_false(label_set_interned(s));
    profiler_stop(&run);
    profiler_release();
}

/* `profile` copies the records out of the rings into its capture while the window runs, and folds them only
 * after the stop: the copies hold their sets' pointers as the rings did, so a set retired meanwhile waits for the
 * fold, which takes its own reference, and goes back to the pool only when the fold is destroyed. */
static void test_a_captured_record_keeps_its_set_until_the_fold_holds_it(void **state)
{
    (void)state;
    boot(fake_model_no_pmu);
    const struct label_set *s = task_holds_the_last_reference(1, "captured");
    struct profile_capture cap;
    assert_true(profile_capture_create(&cap, 100));
    struct profile_run run = { 0 };
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    tick(1);
    struct profile_filter every = { 0 };
    profile_capture_drain(&cap, &run, &every); /* the ring is empty now; the copy holds the record */
    assert_int_equal(profile_ring_count(&run.rings[1]), 0);
    task_set_labels(&fake_task[1], NULL); /* the last reference: retired */
    label_reclaim();
    assert_true(label_set_interned(s));
    profiler_stop(&run);
    struct profile_fold *fold = profile_fold_create();
    assert_non_null(fold);
    profile_fold_drain(fold, profile_capture_replay(&cap, &run), NULL, &tab);
    profile_capture_destroy(&cap);
    label_reclaim();
    assert_true(label_set_interned(s)); /* the fold's reference */
    profile_fold_destroy(fold);
    label_reclaim();
    assert_false(label_set_interned(s));
    profiler_release();
}

/* The sample carries the task's span as it was, and the record keeps it whatever the task does next. */
static void test_the_span_rides_in_the_record(void **state)
{
    (void)state;
    boot(fake_model_no_pmu);
    struct profile_run run = { 0 };
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    task_set_span(&fake_task[3], 41);
    tick(3);
    task_set_span(&fake_task[3], 42);
    tick(3);
    task_set_span(&fake_task[3], 0);
    tick(3);
    const struct profile_ring *ring = &run.rings[3];
    assert_int_equal(profile_ring_count(ring), 3);
    uint64_t want[] = { 41, 42, 0 };
    for (unsigned i = 0; i < 3; i++)
        assert_int_equal(ring->records[i].span, want[i]);
    struct label_pair p = { "span", "42" };
    assert_false(profile_record_has_label(&ring->records[0], &p));
    assert_true(profile_record_has_label(&ring->records[1], &p));
    assert_false(profile_record_has_label(&ring->records[2], &p));
    profiler_stop(&run);
    profiler_release();
}

UNIT_MAIN(NULL, NULL,
          test_released_while_the_tick_samples, test_released_while_the_nmi_samples,
          test_a_reset_frees_what_undrained_records_held, test_a_captured_record_keeps_its_set_until_the_fold_holds_it,
          test_the_span_rides_in_the_record)
