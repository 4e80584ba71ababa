/* tests/unit/test_profiler_label_generations.c: what a ring record says about its label set once the set may
 * be gone, on every PMU model of the fake CPU. A drained record stays in its ring's memory, pointer and all,
 * and the pool may free the set and hand its slot to a new one: every reader (profile_record_labels, the raw
 * line, the label filter) then says the record has no labels it can show, never the new set's -- after the run,
 * and while it still records. And a sample committed after its run's last drain (a CPU inside its sample when
 * the stop gave up waiting for it) holds no set up: with the profiler unclaimed the pool frees it at once,
 * where it used to wait on that ring until the next profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_kernel.h"
#include "kernel/labels.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/run.h"
#include "profiler_counter_fixture.h"
#include "unit_main.h"

static bool counts(const struct model *m) { return m->verdict == PMU_COUNTS; }

/* job=value given to cpu's task, whose reference is then the only one. */
static const struct label_set *task_gets(unsigned cpu, const char *value)
{
    const struct label_set *s = label_intern_one("job", value, NULL);
    assert_non_null(s);
    task_set_labels(&fake_task[cpu], s);
    label_release(s);
    return s;
}

/* One sample of cpu's task, whichever source samples on this model: the counter's NMI, or the tick. */
static void sample_on(const struct model *m, unsigned cpu)
{
    if (counts(m))
        run_periods(cpu, 1);
    else
        tick(cpu);
}

/* The newest record in cpu's ring, drained or not: where a debugger finds it. */
static const struct profile_record *newest(unsigned cpu)
{
    const struct profile_ring *ring = &run.rings[cpu];
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    return &ring->records[(head - 1) & ring->mask];
}

/* The drain's view of cpu 1's records: how many, and the last one's labels as the raw format writes them. */
static unsigned drained;
static char drained_labels[LABEL_SET_TEXT_MAX];
static void take(void *arg, const struct profile_record *rec)
{
    (void)arg;
    if (rec->cpu != 1)
        return;
    drained++;
    label_set_format(profile_record_labels(rec), drained_labels, sizeof drained_labels);
}

/* The labels field of rec's raw line ("s CPU PID TIME LABELS ..."). */
static const char *raw_labels(const struct profile_record *rec)
{
    static char line[PROFILE_RAW_LINE_MAX], field[PROFILE_RAW_LINE_MAX];
    assert_true(profile_raw_record_line(rec, line, sizeof line) > 0);
    unsigned cpu, pid;
    long long t;
    assert_int_equal(sscanf(line, "s %u %u %lld %s", &cpu, &pid, &t, field), 4);
    return field;
}

/* old, a record of job=a whose set was freed, now under job=c in the same slot: nothing of job=c shows. */
static void expect_gone(const struct profile_record *old, const struct label_set *a)
{
    struct label_pair c = { "job", "c" };
    assert_ptr_equal(old->labels, a); /* the record still points at the slot */
    assert_null(profile_record_labels(old));
    assert_string_equal(raw_labels(old), "-");
    assert_false(profile_record_has_label(old, &c));
}

/* job=a freed and its slot given to job=c: the same address, a new generation. */
static const struct label_set *reuse_the_slot_of(const struct label_set *a)
{
    uint32_t was = a->generation;
    task_set_labels(&fake_task[1], NULL);
    label_reclaim();
    assert_false(label_set_interned(a));
    const struct label_set *c = label_intern_one("job", "c", NULL);
    assert_ptr_equal(c, a); /* the pool hands out its lowest free slot: the premise of this test */
    assert_int_equal(c->generation, was + 1);
    return c;
}

static void a_reused_slot_never_shows_its_new_labels_on_an_old_record(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        /* After the run: its records drained, the profiler given back. */
        const struct label_set *a = task_gets(1, "a");
        start_run_from(1);
        sample_on(m, 1);
        drained = 0;
        profiler_drain(&run, NULL, take, NULL);
        assert_true(drained >= 1);
        assert_string_equal(drained_labels, "job=a");
        assert_string_equal(raw_labels(newest(1)), "job=a");
        stop_run();
        profiler_release();
        const struct label_set *c = reuse_the_slot_of(a);
        expect_gone(newest(1), a);
        label_release(c);
        label_reclaim();

        /* While the run records (a stream's): the drained record goes stale the same way, and the next
         * sample, of the slot's new set, reads as that set. */
        a = task_gets(1, "a");
        start_run_from(1);
        sample_on(m, 1);
        profiler_drain(&run, NULL, take, NULL);
        c = reuse_the_slot_of(a);
        expect_gone(newest(1), a);
        task_set_labels(&fake_task[1], c);
        label_release(c);
        sample_on(m, 1);
        assert_ptr_equal(profile_record_labels(newest(1)), c);
        assert_string_equal(raw_labels(newest(1)), "job=c");
        drained = 0;
        profiler_drain(&run, NULL, take, NULL);
        assert_int_equal(drained, 1);
        assert_string_equal(drained_labels, "job=c");
        stop_run();
        profiler_release();
        task_set_labels(&fake_task[1], NULL);
        label_reclaim();
        assert_false(label_set_interned(c));
    }
}

/* Inside cpu's sample, after it loaded its task's set: CPU 0 stops the run (cpu is inside its interrupt: it
 * neither ticks nor takes the stop's request in the stop's wait, which gives up on it), drains a last time and
 * gives the profiler back. The sample commits after all that. */
static bool stop_armed;
static void stop_inside_the_sample(const struct task *task)
{
    (void)task;
    if (!stop_armed)
        return;
    stop_armed = false;
    unsigned cpu = fake_cpu_index;
    fake_cpu_index = 0;
    away_cpus = 1u << cpu;
    stop_run();
    drained = 0;
    profiler_drain(&run, NULL, take, NULL);
    profiler_release();
    fake_cpu_index = cpu;
}

static void a_sample_after_the_last_drain_leaves_the_pool_freeing(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        const struct label_set *s = task_gets(1, "raced");
        start_run_from(1);
        uint32_t before = profile_ring_count(&run.rings[1]);
        stop_armed = true;
        fake_stack_bounds_hook = stop_inside_the_sample;
        sample_on(m, 1);
        fake_stack_bounds_hook = NULL;
        assert_false(stop_armed); /* the stop ran inside the sample */
        away_cpus = 0;
        cpu_comes_back(1);
        assert_int_equal(drained, before); /* the last drain came before the sample's commit */
        assert_int_equal(profile_ring_count(&run.rings[1]), 1); /* which no one will drain */
        assert_ptr_equal(newest(1)->labels, s);

        struct label_stats st;
        label_stats(&st);
        uint64_t freed = st.freed;
        task_set_labels(&fake_task[1], NULL);
        label_reclaim();
        assert_false(label_set_interned(s));
        label_stats(&st);
        assert_int_equal(st.freed, freed + 1);
        assert_int_equal(st.waiting, 0);
        assert_null(profile_record_labels(newest(1))); /* and the record says so once the slot is reused */
        const struct label_set *other = label_intern_one("job", "other", NULL);
        assert_ptr_equal(other, s);
        assert_null(profile_record_labels(newest(1)));
        label_release(other);
        label_reclaim();
    }
}

UNIT_MAIN_EACH(NULL, teardown, setup_group, NULL,
               a_reused_slot_never_shows_its_new_labels_on_an_old_record,
               a_sample_after_the_last_drain_leaves_the_pool_freeing)
