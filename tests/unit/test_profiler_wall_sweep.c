/* tests/unit/test_profiler_wall_sweep.c: a wall run's sweep on the tick (kernel/profiler.c): every task of the
 * ticking CPU sampled, whatever it is doing -- the current one from the interrupted context, the others from
 * where they wait -- each with its activity, its wait, its labels' owner and its chain, weighing the sweep's
 * period; an idle current task and other CPUs' tasks left out; the period kept in time at a faster tick and
 * a late sweep weighing the time that passed; a sleeper past its wake time still waiting (its timer, the tick,
 * has not fired); and a CPU profile's tick untouched by any of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_cpu.h"
#include "fake_hal.h"
#include "fake_kernel.h"
#include "arch/x86_64/pmu_backend.h" /* pmu_reset_for_tests */
#include "hal/pmu.h"
#include "kernel/profiler.h"
#include "kernel/task.h"
#include "unit_main.h"

void *kmalloc(size_t size) { return malloc(size); }

static struct profile_run run;
static struct task sleeper, reader, preempted, elsewhere;

static void start(bool wall)
{
    run.wall = wall;
    assert_int_equal(profiler_start(&run), PROFILER_OK);
}

static void stop(void)
{
    profiler_stop(&run);
    profiler_release();
}

static void tick_cpu0(void)
{
    fake_cpu_index = 0;
    struct context ctx = fake_interrupt(0x4000, 0xE0);
    profiler_tick(&ctx);
}

/* The records of CPU 0's ring, taken out. */
static unsigned take(struct profile_record *out, unsigned max)
{
    unsigned n = 0;
    const struct profile_record *rec;
    while ((rec = profile_ring_peek(&run.rings[0])) && n < max) {
        out[n++] = *rec;
        profile_ring_advance(&run.rings[0]);
    }
    return n;
}

/* A run started -- a wall run sweeping every 10 ms, or a CPU profile, which does not sweep -- and CPU 0's first
 * tick: the records it made taken into recs (8 at most); how many. */
static unsigned start_and_tick(bool wall, struct profile_record recs[8])
{
    start(wall);
    assert_true(run.wall == wall);
    assert_int_equal(run.wall_period_ns, wall ? 10000000 : 0);
    tick_cpu0();
    return take(recs, 8);
}

/* CPU 0's ring holds exactly n records (at most 16), each standing for period_ns; taken out. */
static void expect_records_of_period(unsigned n, uint64_t period_ns)
{
    struct profile_record recs[16];
    assert_int_equal(take(recs, 16), n);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(recs[i].period, period_ns);
}

static int setup(void **state)
{
    (void)state;
    fake_tasks_reset(10);
    fake_cpu_count = 2;
    fake_cpu_index = 0;
    fake_time_ns = 5000000000;
    tick_set_hz(100);
    memset(&run, 0, sizeof run);
    sleeper = (struct task){ .pid = 20, .cpu = 0, .waiting_on = TASK_WAIT_TIMER, .wake_at_ns = fake_time_ns + 50000000 };
    atomic_store(&sleeper.state, TASK_SLEEPING);
    reader = (struct task){ .pid = 21, .cpu = 0, .waiting_on = TASK_WAIT_NET };
    atomic_store(&reader.state, TASK_BLOCKED);
    preempted = (struct task){ .pid = 22, .cpu = 0 };
    atomic_store(&preempted.state, TASK_READY);
    elsewhere = (struct task){ .pid = 23, .cpu = 1, .waiting_on = TASK_WAIT_INPUT };
    atomic_store(&elsewhere.state, TASK_BLOCKED);
    struct task *others[] = { &sleeper, &reader, &preempted, &elsewhere };
    for (unsigned i = 0; i < 4; i++) {
        fake_other_tasks[i] = others[i];
        fake_chain_pc[i] = 0x7000 + 0x100 * i;
    }
    return 0;
}

static void test_a_sweep_samples_every_task_of_its_cpu(void **state)
{
    (void)state;
    struct profile_record recs[8];
    assert_int_equal(start_and_tick(true, recs), 4); /* the current task and its CPU's three others; not CPU 1's */
    static const struct {
        uint32_t pid;
        uint8_t activity, waiting_on;
        uintptr_t leaf;
    } want[] = {
        { 10, TASK_ACT_RUNNING, TASK_WAIT_NONE, 0x4000 },
        { 20, TASK_ACT_WAITING, TASK_WAIT_TIMER, 0x7000 },
        { 21, TASK_ACT_WAITING, TASK_WAIT_NET, 0x7100 },
        { 22, TASK_ACT_RUNNABLE, TASK_WAIT_NONE, 0x7200 },
    };
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(recs[i].pid, want[i].pid);
        assert_int_equal(recs[i].flags, PROFILE_REC_WALL);
        assert_int_equal(recs[i].wall.activity, want[i].activity);
        assert_int_equal(recs[i].wall.waiting_on, want[i].waiting_on);
        assert_int_equal(recs[i].frames[0], want[i].leaf);
        assert_int_equal(recs[i].period, 10000000);
        assert_int_equal(recs[i].run, run.run);
        assert_int_equal(recs[i].cpu, 0);
        assert_int_equal(recs[i].time_ns, fake_time_ns);
    }
    stop();
}

static void test_an_idle_current_task_is_left_out(void **state)
{
    (void)state;
    fake_task[0].is_idle = true;
    struct profile_record recs[8];
    assert_int_equal(start_and_tick(true, recs), 3);
    assert_int_equal(recs[0].pid, 20);
    stop();
}

static void test_a_task_with_nothing_to_walk_still_counts(void **state)
{
    (void)state;
    fake_chain_pc[1] = 0; /* the reader's walk finds nothing */
    struct profile_record recs[8];
    assert_int_equal(start_and_tick(true, recs), 4);
    assert_int_equal(recs[2].pid, 21);
    assert_int_equal(recs[2].nframes, 1);
    assert_int_equal(recs[2].frames[0], 0);
    stop();
}

/* Past its wake time a sleeper still waits: its CPU's tick, the timer, has not woken it yet. */
static void test_a_sleeper_past_its_wake_time_still_waits(void **state)
{
    (void)state;
    sleeper.wake_at_ns = fake_time_ns - 3000000;
    reader.block_has_deadline = true;
    reader.wake_at_ns = fake_time_ns - 25000000;
    struct profile_record recs[8];
    assert_int_equal(start_and_tick(true, recs), 4);
    assert_int_equal(recs[1].wall.activity, TASK_ACT_WAITING);
    assert_int_equal(recs[1].wall.waiting_on, TASK_WAIT_TIMER);
    assert_int_equal(recs[2].wall.activity, TASK_ACT_WAITING);
    assert_int_equal(recs[2].wall.waiting_on, TASK_WAIT_NET);
    stop();
}

static void test_the_sweep_keeps_its_period_at_a_faster_tick(void **state)
{
    (void)state;
    tick_set_hz(1000);
    start(true);
    assert_int_equal(run.wall_period_ns, 10000000);
    for (unsigned i = 0; i < 25; i++) {
        tick_cpu0(); /* sweeps on the 1st, 11th and 21st */
        fake_time_ns += 1000000;
    }
    expect_records_of_period(12, 10000000);
    stop();
}

/* Ticks lost or late (a host took the CPU away): the next sweep stands for all the time since the last, and
 * one a little early (half a tick) still sweeps. */
static void test_a_late_sweep_weighs_the_time_that_passed(void **state)
{
    (void)state;
    tick_set_hz(1000);
    start(true);
    tick_cpu0();
    fake_time_ns += 37000000;
    tick_cpu0();
    fake_time_ns += 9600000;
    tick_cpu0();
    fake_time_ns += 9000000; /* too early by more than half a tick: no sweep */
    tick_cpu0();
    struct profile_record recs[16];
    assert_int_equal(take(recs, 16), 12);
    assert_int_equal(recs[0].period, 10000000);
    assert_int_equal(recs[4].period, 37000000);
    assert_int_equal(recs[8].period, 9600000);
    stop();
}

/* A ring without room for a whole sweep: the sweep is put off whole, its records counted as drops, and the next
 * one stands for its time too -- never a sweep cut short, which would keep only the tasks first in the list. */
static void test_a_sweep_the_ring_cannot_hold_is_put_off_whole(void **state)
{
    (void)state;
    start(true);
    uint32_t capacity = run.rings[0].mask + 1;
    for (uint32_t i = 0; i < capacity / 4; i++) {
        tick_cpu0();
        fake_time_ns += 10000000;
    }
    assert_int_equal(profile_ring_count(&run.rings[0]), capacity);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 0);
    tick_cpu0(); /* no room for its 4 */
    assert_int_equal(profile_ring_count(&run.rings[0]), capacity);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 4);
    fake_time_ns += 10000000;
    profile_ring_reset(&run.rings[0]); /* drained (the reset also zeroes the drops) */
    tick_cpu0();
    expect_records_of_period(4, 20000000);
    stop();
}

static void test_a_cpu_profile_samples_only_the_current_task(void **state)
{
    (void)state;
    struct profile_record recs[8];
    assert_int_equal(start_and_tick(false, recs), 1);
    assert_int_equal(recs[0].pid, 10);
    assert_int_equal(recs[0].flags & PROFILE_REC_WALL, 0);
    stop();
}

static int group_setup(void **state)
{
    (void)state;
    fake_model_no_pmu(); /* no counter: a CPU profile is the tick's too, as a wall one always is */
    pmu_reset_for_tests();
    pmu_select(NULL);
    return 0;
}

UNIT_MAIN_EACH(setup, NULL, group_setup, NULL,
               test_a_sweep_samples_every_task_of_its_cpu, test_an_idle_current_task_is_left_out,
               test_a_task_with_nothing_to_walk_still_counts,
               test_a_sleeper_past_its_wake_time_still_waits,
               test_the_sweep_keeps_its_period_at_a_faster_tick, test_a_late_sweep_weighs_the_time_that_passed,
               test_a_sweep_the_ring_cannot_hold_is_put_off_whole,
               test_a_cpu_profile_samples_only_the_current_task)
