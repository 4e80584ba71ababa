/* tests/unit/test_profiler_weights.c: what each sample weighs (issue 23, item 3), on the fake CPU for every model
 * of tests/unit/profiler_counter_fixture.c: every record carries the period it was taken at -- the counter's,
 * in its event's cycles, which throttling doubles on that CPU from the overflow after the throttle, or the
 * tick's in nanoseconds -- the report's percentages weigh by it and name a throttled CPU with its period in the
 * per-CPU line; and the stopped-counter watch scales with a CPU's current period, so a CPU throttled to 64
 * times its period (an overflow every 64 ms, several busy ticks apart) is not declared stopped, while a
 * counter that really stops while throttled still is, after the scaled silence. And the rate as measured
 * (item 4): samples per second of each CPU's busy time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/labels.h"
#include "profiler_counter_fixture.h"
#include "unit_main.h"

/* The periods of the records waiting in cpu's ring, oldest first, into out; how many. */
static unsigned ring_periods(unsigned cpu, uint32_t *out, unsigned max)
{
    const struct profile_ring *ring = &run.rings[cpu];
    uint32_t tail = atomic_load(&ring->tail);
    unsigned n = ring_count(cpu);
    for (unsigned i = 0; i < n && i < max; i++)
        out[i] = ring->records[(tail + i) & ring->mask].period;
    return n;
}

/* Throttles cpu's counter until its period stops doubling (64 times the nominal one): each round its NMIs
 * cost four periods of the CPU's time, far over the budget, then a tick doubles the period. Returns the
 * period reached. The NMIs it takes are samples, weighed at the period they ended. */
static uint64_t throttle_to_the_limit(unsigned cpu)
{
    fake_cpu_index = cpu;
    for (;;) {
        uint64_t period = account(cpu)->period_cycles;
        nmi_cost = 4 * period;
        unsigned before = nmis_claimed;
        while (nmis_claimed == before) /* at least one NMI of the current period */
            fake_advance(period);
        fake_time_ns += TICK_NS;
        tick(cpu);
        if (account(cpu)->period_cycles == period)
            break;
        assert_int_equal(account(cpu)->period_cycles, 2 * period);
    }
    nmi_cost = 0;
    return account(cpu)->period_cycles;
}

/* A busy, punctual tick on cpu, with ten nominal periods of cycles since the last one. */
static void busy_tick(unsigned cpu, uint64_t nominal)
{
    fake_cpu_index = cpu;
    fake_advance(10 * nominal);
    fake_time_ns += TICK_NS;
    tick(cpu);
}

static void counter_samples_weigh_their_period_on_every_model(void **state)
{
    (void)state;
    unsigned tried = 0;
    const struct label_set *a = label_intern_one("job", "a", NULL), *b = label_intern_one("job", "b", NULL);
    for (unsigned next = 0; boot_next_counting_model(&next);) {
        tried++;
        atomic_store(&fake_task[0].labels, a);
        atomic_store(&fake_task[1].labels, b);
        start_run();
        uint64_t p = pmu_period_cycles();
        assert_int_equal(run.period_cycles, p);
        tick(0);
        tick(1);

        /* CPU 0 over budget, then throttled: its period doubles from the overflow after; CPU 1 at its period. */
        nmi_cost = p / 2;
        run_periods(0, 4);
        nmi_cost = 0;
        fake_time_ns += TICK_NS;
        tick(0);
        run_periods(1, 8);
        assert_true(account(0)->throttled);
        assert_int_equal(account(0)->period_cycles, 2 * p);
        fake_cpu_index = 0;
        fake_advance(p);     /* the period already loaded ends: it weighs one period */
        fake_advance(2 * p); /* then two doubled ones */
        fake_advance(2 * p);

        uint32_t periods[16];
        assert_int_equal(ring_periods(0, periods, 16), 7);
        for (unsigned k = 0; k < 5; k++)
            assert_int_equal(periods[k], p);
        assert_int_equal(periods[5], 2 * p);
        assert_int_equal(periods[6], 2 * p);
        assert_int_equal(ring_periods(1, periods, 16), 8);
        for (unsigned k = 0; k < 8; k++)
            assert_int_equal(periods[k], p);

        stop_run();
        const char *r = report_of(&run);
        char line[160];
        snprintf(line, sizeof line, "per cpu: 0:7 (throttled: every %llu cycles) 1:8 2:0 3:0\n",
                 (unsigned long long)(2 * p));
        expect_in(r, line);
        /* job=a: 7 samples weighing 9 periods; job=b: 8 weighing 8 -- a first, by weight, 52.9% of 17 */
        expect_in(r, "labels: 52.9% (7) job=a, 47.1% (8) job=b\n");
        expect_in(r, "\n100.0% 15 fn+0x10\n");
        profiler_release();
        atomic_store(&fake_task[0].labels, NULL);
        atomic_store(&fake_task[1].labels, NULL);
    }
    assert_int_equal(tried, 6); /* the counting models */
}

static void tick_samples_weigh_the_ticks_period(void **state)
{
    (void)state;
    unsigned tried = 0;
    for (size_t i = 0; i < PROFILER_COUNTER_MODELS; i++) {
        if (models[i].verdict == PMU_COUNTS)
            continue;
        print_message("model: %s\n", models[i].name);
        tried++;
        boot(&models[i]);
        start_run();
        assert_int_equal(run.period_ns, TICK_NS);
        for (unsigned k = 0; k < 3; k++) {
            fake_time_ns += TICK_NS;
            tick(2);
        }
        uint32_t periods[4];
        assert_int_equal(ring_periods(2, periods, 4), 3);
        for (unsigned k = 0; k < 3; k++)
            assert_int_equal(periods[k], TICK_NS);
        stop_run();
        profiler_release();
    }
    assert_int_equal(tried, PROFILER_COUNTER_MODELS - 6); /* all but the six counting models */
}

/* On a counter run, a CPU whose counter stopped samples on the tick: its samples weigh the tick's period in
 * TSC cycles, the run's one unit, so they are not taken for counter periods. */
static void a_counter_runs_tick_samples_weigh_the_tick_in_cycles(void **state)
{
    (void)state;
    start_armed_on_intel();
    fake.cpu[0].lvtpc |= LVT_MASK_BIT;
    uint64_t p = pmu_period_cycles();
    /* the silence limit (two ticks) and the two a host taking the CPU away can empty, then one that samples */
    for (unsigned k = 0; k < 5; k++)
        busy_tick(0, p);
    assert_int_equal(account(0)->source, PROFILER_CPU_TICK_STOPPED);
    uint32_t periods[8];
    unsigned n = ring_periods(0, periods, 8);
    assert_true(n >= 1);
    assert_int_equal(periods[n - 1], (uint64_t)TICK_NS * fake_cycles_per_ms / 1000000);
    stop_run();
    profiler_release();
}

static void a_throttled_cpu_is_not_declared_stopped_on_every_model(void **state)
{
    (void)state;
    unsigned tried = 0;
    for (unsigned next = 0; boot_next_counting_model(&next);) {
        tried++;
        start_run();
        uint64_t p = pmu_period_cycles();
        tick(0);
        uint64_t throttled = throttle_to_the_limit(0);
        assert_int_equal(throttled, 64 * p);

        /* An overflow every 64 periods, a busy tick every 10: six or seven silent ticks in a row, over and over.
         * The unscaled watch (two silent ticks) would call that a stopped counter. */
        unsigned nmis = account(0)->nmis;
        for (unsigned k = 0; k < 40; k++)
            busy_tick(0, p);
        assert_int_equal(account(0)->source, PROFILER_CPU_COUNTER);
        assert_true(account(0)->nmis >= nmis + 5); /* 400 periods' worth of cycles: five or six overflows */
        uint32_t periods[PROFILE_RING_RECORDS];
        unsigned n = ring_periods(0, periods, PROFILE_RING_RECORDS);
        assert_int_equal(periods[n - 1], 64 * p);

        /* A counter that really stops while throttled is still noticed: after the silence scaled with it. */
        fake.cpu[0].lvtpc |= LVT_MASK_BIT;
        unsigned silent = 0;
        while (account(0)->source == PROFILER_CPU_COUNTER && silent < 1000) {
            busy_tick(0, p);
            silent++;
        }
        assert_int_equal(account(0)->source, PROFILER_CPU_TICK_STOPPED);
        /* two silent busy ticks at the nominal period (four periods, at least two ticks), 64 times that now; the
         * streak may have begun up to six ticks before the mask, after the last overflow */
        assert_int_equal(account(0)->silent_ticks_limit, 2 * 64);
        assert_true(silent > 2 * 64 - 8 && silent <= 2 * 64);
        stop_run();
        expect_in(report_of(&run), "cpu 0: tick (counter stopped)\n");
        profiler_release();
    }
    assert_int_equal(tried, 6); /* the counting models */
}

/* The rate as measured (item 4): each CPU's samples per second of its busy time -- the window less the time its
 * idle task ran -- on every counting model; the header states the period in cycles and no rate. */
static void the_rate_is_per_busy_second_on_every_model(void **state)
{
    (void)state;
    unsigned tried = 0;
    for (unsigned next = 0; boot_next_counting_model(&next);) {
        tried++;
        memset(fake_idle_ns, 0, sizeof fake_idle_ns);
        start_run();
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            tick(cpu);
        run_periods(0, 100); /* busy the whole 100 ms */
        run_periods(1, 25);  /* busy half of it */
        fake_idle_ns[1] += 50000000;
        fake_idle_ns[2] += 100000000; /* idle throughout */
        fake_time_ns += 100000000;
        stop_run();
        const char *r = report_of(&run);
        char line[160];
        snprintf(line, sizeof line, "source %s every %llu cycles\n", pmu_source_name(),
                 (unsigned long long)pmu_period_cycles());
        expect_in(r, line);
        expect_in(r, "\nrate per busy second: 0:1000 1:500 2:- 3:0\n");
        profiler_release();
    }
    assert_int_equal(tried, 6); /* the counting models */
}

UNIT_MAIN_EACH(NULL, teardown, setup_group, NULL,
               counter_samples_weigh_their_period_on_every_model, tick_samples_weigh_the_ticks_period,
               a_counter_runs_tick_samples_weigh_the_tick_in_cycles,
               a_throttled_cpu_is_not_declared_stopped_on_every_model, the_rate_is_per_busy_second_on_every_model)
