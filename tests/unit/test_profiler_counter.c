/* tests/unit/test_profiler_counter.c: the handshake between the profiler's tick and the performance counter
 * (kernel/profiler.c over arch/x86_64/pmu.c), on the stateful fake CPU for every PMU model it has: each CPU
 * arms on the first tick of a run and takes no tick sample while armed; its overflows arrive as NMIs and are
 * sampled through profiler_nmi(); the first tick after the stop disarms it, and overflows between the stop
 * and that tick are dropped; an idle tick afterwards touches no PMU register. Also: an arm fault leaves that
 * CPU on the tick and named, a counter that stops interrupting is noticed (with what its registers showed),
 * an NMI over budget doubles the period, a 2000 ms run at 1 kHz on 4 CPUs, drained as the command drains
 * it, drops nothing, and the tick's lateness is measured on the clock against a timer that drifts from it. The
 * machine is tests/unit/profiler_counter_fixture.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profiler_counter_fixture.h"
#include "unit_main.h"

/* ---- tests ------------------------------------------------------------------------------------------- */

static void handshake_on_every_model(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        start_run();
        assert_int_equal(pmu_verdict(), m->verdict);
        bool counts = m->verdict == PMU_COUNTS;
        assert_true(counts == (run.tick_reason == NULL));

        /* The first tick of the run: arm (and no tick sample), or sample on the tick. */
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            fake_cpu_index = cpu;
            assert_false(pmu_armed_this_cpu());
            tick(cpu);
            assert_true(pmu_armed_this_cpu() == counts);
            assert_int_equal(ring_count(cpu), counts ? 0 : 1);
        }
        if (counts) {
            /* Overflows arrive as NMIs and are the samples; an armed CPU's tick adds none. */
            for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
                run_periods(cpu, 3);
                assert_int_equal(ring_count(cpu), 3);
                fake_time_ns += TICK_NS;
                tick(cpu);
                assert_int_equal(ring_count(cpu), 3);
                assert_int_equal(account(cpu)->source, PROFILER_CPU_COUNTER);
                assert_int_equal(account(cpu)->nmis, 3);
            }
            assert_int_equal(fake.nmis_genuine, 0);
        }

        /* Stop: each CPU disarms on its next tick (the stop's request to it still on its way), and the
         * overflow in between is claimed but dropped. The request, when it comes, finds nothing to do. */
        overflow_before_disarm = true;
        slow_request_cpus = (1u << FAKE_CPUS) - 1;
        unsigned claimed_before = nmis_claimed;
        stop_run();
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            cpu_comes_back(cpu);
        assert_true(fake_sleeps > 0 || !counts);
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            fake_cpu_index = cpu;
            assert_false(pmu_armed_this_cpu());
            assert_int_equal(ring_count(cpu), counts ? 3 : 1);
        }
        if (counts)
            assert_int_equal(nmis_claimed - claimed_before, FAKE_CPUS);
        assert_int_equal(fake.nmis_genuine, 0);

        /* After the run: an idle tick touches no PMU register, and the disarmed counter raises nothing. */
        unsigned msr = fake.msr_accesses, lvt = fake.lvt_writes, nmis = fake.nmis_mine + fake.nmis_genuine;
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            tick(cpu);
            run_periods(cpu, 5);
        }
        assert_int_equal(fake.msr_accesses, msr);
        assert_int_equal(fake.lvt_writes, lvt);
        assert_int_equal(fake.nmis_mine + fake.nmis_genuine, nmis);
        profiler_release();
    }
}

static void genuine_nmi_outside_a_run_is_not_claimed(void **state)
{
    (void)state;
    start_armed_on_intel();
    run_periods(0, 1);
    stop_run();
    profiler_release();
    fake_cpu_index = 0;
    assert_false(fake_inject_nmi()); /* long after the disarm: genuine, for the caller to panic on */
    assert_int_equal(fake.nmis_genuine, 1);
}

static void arm_fault_leaves_that_cpu_on_the_tick_and_named(void **state)
{
    (void)state;
    start_armed_on_intel();
    assert_true(pmu_armed_this_cpu());
    /* CPU 1's control register #GPs (a hypervisor that lets CPU 0 have its counter and not CPU 1). */
    fake.gp_msr = FAKE_MSR_FIXED_CTR_CTRL;
    tick(1);
    assert_false(pmu_armed_this_cpu());
    assert_int_equal(ring_count(1), 1); /* sampled on the tick */
    fake_time_ns += TICK_NS;
    tick(1);
    assert_int_equal(ring_count(1), 2);
    fake.gp_msr = 0;
    run_periods(0, 2);
    stop_run();
    assert_int_equal(account(0)->source, PROFILER_CPU_COUNTER);
    assert_int_equal(account(1)->source, PROFILER_CPU_TICK_ARM_FAULT);
    const char *r = report_of(&run);
    expect_in(r, "source mixed: pmu/nmi intel fixed-ctr1 every 2000000 cycles on 1 cpus, tick at 100 Hz on 1\n");
    expect_in(r, "per cpu: 0:2 1:2 2:0 3:0\n");
    expect_in(r, "cpu 1: tick (arm faulted)\n");
    expect_in(r, "\npercentages are of weight, not of sample counts: the counter's samples weigh core cycles, the "
                 "tick's TSC cycles\n");
    profiler_release();
}

/* A counter stops interrupting: its LVT entry masked (as if firmware or a hypervisor masked it). */
static void stopped_counter_is_noticed(void **state)
{
    (void)state;
    for (unsigned next = 0; boot_next_counting_model(&next);) {
        start_run_from(0);
        run_periods(0, 5);
        assert_int_equal(ring_count(0), 5);
        fake.cpu[0].lvtpc |= LVT_MASK_BIT;

        /* An idle stretch is no evidence: the counter counts unhalted cycles. */
        fake_time_ns += TICK_NS;
        fake_idle_waits[0]++;
        tick(0);
        fake_time_ns += TICK_NS;
        fake_idle_waits[0]++;
        tick(0);
        assert_int_equal(account(0)->source, PROFILER_CPU_COUNTER);
        /* Busy ticks without an overflow: the limit (two ticks at 100 Hz) is not enough, since a host taking
         * the CPU away can empty two tick intervals (a late tick, with no time of the CPU's own since the one
         * before, and the interval it starts); the limit and those two are. The first is such a late tick. */
        fake_time_ns += 5 * TICK_NS;
        tick(0);
        for (unsigned i = 0; i < 2; i++) {
            run_periods(0, 10);
            fake_time_ns += TICK_NS;
            tick(0);
            assert_int_equal(account(0)->source, PROFILER_CPU_COUNTER);
        }
        assert_int_equal(ring_count(0), 5);
        run_periods(0, 10);
        fake_time_ns += TICK_NS;
        tick(0);
        assert_int_equal(account(0)->source, PROFILER_CPU_TICK_STOPPED);
        assert_false(pmu_armed_this_cpu());
        assert_int_equal(ring_count(0), 6); /* that tick sampled, and every later one does */
        fake_time_ns += TICK_NS;
        tick(0);
        assert_int_equal(ring_count(0), 7);
        const struct pmu_snapshot *snap = &account(0)->stopped_msrs;
        assert_true(snap->count >= 3);
        assert_true(snap->lvt_masked);
        assert_true(snap->counting);
        stop_run();
        const char *r = report_of(&run);
        expect_in(r, "cpu 0: tick (counter stopped)\n");
        expect_in(r, "cpu 0: its counter stopped interrupting ");
        expect_in(r, "lvt masked");
        profiler_release();
    }
}

static void nmi_over_budget_doubles_the_period(void **state)
{
    (void)state;
    start_armed_on_intel();
    uint64_t period = pmu_period_cycles();
    /* Each NMI takes half a period: 50% of the CPU, over the 25% budget. */
    nmi_cost = period / 2;
    run_periods(0, 4);
    fake_time_ns += TICK_NS;
    tick(0);
    assert_true(account(0)->throttled);
    assert_int_equal(account(0)->period_cycles, 2 * period);
    /* The next overflow is a doubled period away: one period raises nothing, the second does. */
    unsigned before = nmis_claimed;
    fake_cpu_index = 0;
    fake_advance(period + period / 2); /* the period already loaded ends within this */
    unsigned after_first = nmis_claimed;
    fake_advance(period + period / 4);
    assert_int_equal(nmis_claimed, after_first);
    fake_advance(period);
    assert_int_equal(nmis_claimed, after_first + 1);
    assert_true(after_first - before <= 1);
    stop_run();
    const char *throttled = report_of(&run);
    expect_in(throttled, "cpu 0: throttled: its NMIs took over 25% of the cpu, period doubled to ");
    expect_in(throttled, "\npercentages are of weight, not of sample counts: a throttled cpu's samples weigh its "
                         "longer period\n");
    profiler_release();

    /* Within budget nothing changes, and the next run starts from the full rate again. */
    start_armed_on_intel();
    nmi_cost = period / 100;
    run_periods(0, 4);
    fake_time_ns += TICK_NS;
    tick(0);
    assert_false(account(0)->throttled);
    assert_int_equal(account(0)->period_cycles, period);
    stop_run();
    profiler_release();
}

static void two_seconds_at_1khz_on_4_cpus_drop_nothing(void **state)
{
    (void)state;
    boot(&models[0]);
    struct profile_fold *fold = profile_fold_create();
    assert_non_null(fold);
    start_run();
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
        tick(cpu);
    /* 2000 ms: a counter period (1 ms) at a time on each CPU, a tick every 10 ms, a drain every 50 ms. */
    for (unsigned ms = 1; ms <= 2000; ms++) {
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            run_periods(cpu, 1);
        fake_time_ns += 1000000;
        if (ms % 10 == 0)
            for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
                tick(cpu);
        if (ms % PROFILE_DRAIN_MS == 0)
            profile_fold_drain(fold, &run, NULL, &tab);
    }
    stop_run();
    profile_fold_drain(fold, &run, NULL, &tab);
    assert_int_equal(profile_fold_samples(fold), 8000);
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        assert_int_equal(profile_ring_drops(&run.rings[cpu]), 0);
        assert_int_equal(account(cpu)->nmis, 2000);
    }
    char out[4096];
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, sizeof out);
    profile_report_print(&run, fold, NULL, 3, &tab, &bs.sink);
    expect_in(out, "8000 samples on 4 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1 every 2000000 cycles\n");
    expect_in(out, "per cpu: 0:2000 1:2000 2:2000 3:2000\n");
    profile_fold_destroy(fold);
    profiler_release();
}

/* The same run without draining: the rings fill, and the drops are counted, not hidden. */
static void undrained_run_counts_its_drops(void **state)
{
    (void)state;
    start_armed_on_intel();
    run_periods(0, PROFILE_RING_RECORDS + 100);
    stop_run();
    assert_int_equal(ring_count(0), PROFILE_RING_RECORDS);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 100);
    profiler_release();
}

/* What the counter's NMI knows of the code it interrupted: three overflows of CPU 0's armed counter, their NMIs
 * through the kernel's path (profiler_nmi) on a context with interrupts off, then in an interrupt handler too,
 * then in one with interrupts on. */
static void interrupts_off_and_in_interrupt_are_marked(void **state)
{
    (void)state;
    start_armed_on_intel();
    unsigned claimed = nmis_claimed; /* the probe's own NMI among them */
    struct context ctx = busy_ctx();
    nmi_ctx = &ctx;
    ctx.rflags = 0x2; /* interrupts off where the NMI landed */
    run_periods(0, 1);
    fake_in_interrupt = true;
    run_periods(0, 1);
    ctx.rflags = 0x202;
    run_periods(0, 1);
    fake_in_interrupt = false;
    nmi_ctx = NULL;
    assert_int_equal(nmis_claimed - claimed, 3);
    assert_int_equal(ring_count(0), 3);
    stop_run();
    const struct profile_record *rec = profile_ring_peek(&run.rings[0]);
    assert_int_equal(rec->flags, PROFILE_REC_IRQS_OFF);
    /* It weighs the period its overflow ended: the counter's (pmu_period_cycles, a millisecond of the fake's
     * 2 GHz clock), which profiler_nmi records -- not a tick's weight. */
    assert_int_equal(rec->period, pmu_period_cycles());
    assert_int_equal(rec->period, 2000000);
    const char *r = report_of(&run);
    expect_in(r, "fn+0x10 [irqs off]\n");
    expect_in(r, "fn+0x10 [in irq, irqs off]\n");
    expect_in(r, "fn+0x10 [in irq]\n");
    profiler_release();
}

/* On the tick: a late tick let in just after an sti/popf is interrupts-off code's trace; a late tick elsewhere
 * is the CPU taken away; punctual ticks are neither. */
static void held_off_ticks_are_told_from_late_ones(void **state)
{
    (void)state;
    boot(&models[MODEL_NO_PMU]); /* no PMU: the tick samples */
    start_run();
    tick(0); /* the first tick of the run: on time */
    /* Held off 6 ms, let in after a popf. */
    fake_time_ns += TICK_NS + 6000000;
    fake_irq_enable_site = "popf";
    tick(0);
    /* 40 ms late (four ticks missed, the fifth taken on time of its own period), not after a re-enable. */
    fake_time_ns += 5 * TICK_NS - 6000000;
    fake_irq_enable_site = NULL;
    tick(0);
    /* Punctual. */
    fake_time_ns += TICK_NS;
    tick(0);
    /* A little late (under half a period): not counted. */
    fake_time_ns += TICK_NS + 3000000;
    fake_irq_enable_site = "sti";
    tick(0);
    /* Held off 28 ms (the 3 ms the last was late by, and 25 more): let in after an sti, the ticks due 0, 10
     * and 20 ms into it coalesced into this one. */
    fake_time_ns += TICK_NS + 25000000;
    tick(0);
    fake_irq_enable_site = NULL;
    stop_run();
    const struct profiler_cpu_run *c = account(0);
    assert_int_equal(c->late_ticks, 3);
    assert_int_equal(c->let_in_ticks, 2);
    assert_int_equal(c->held_off_ns, 6000000 + 28000000);
    assert_int_equal(c->late_elsewhere_ns, 40000000);
    assert_int_equal(ring_count(0), 6);
    /* Each record's flags, time held off and weight: a let-in tick weighs every tick it stands for, any other
     * one period (the 40 ms late one too: who ran while the CPU was away is unknown). */
    const struct { uint8_t flags; uint32_t held_off_us; uint32_t periods; } want[6] = {
        { 0, 0, 1 }, { PROFILE_REC_LET_IN, 6000, 1 }, { 0, 0, 1 }, { 0, 0, 1 }, { 0, 0, 1 },
        { PROFILE_REC_LET_IN, 28000, 3 },
    };
    for (unsigned i = 0; i < 6; i++) {
        const struct profile_record *rec = profile_ring_peek(&run.rings[0]);
        print_message("record %u\n", i);
        assert_int_equal(rec->flags, want[i].flags);
        assert_int_equal(rec->held_off_us, want[i].held_off_us);
        assert_int_equal(rec->period, want[i].periods * TICK_NS);
        profile_ring_advance(&run.rings[0]);
    }
    profiler_release();

    /* The report: the let-in chain marked and apart, the held-off time and where it was let in. */
    boot(&models[MODEL_NO_PMU]);
    start_run_from(0);
    for (int i = 0; i < 3; i++) {
        fake_time_ns += TICK_NS + 8000000;
        fake_irq_enable_site = "popf";
        tick(0);
        fake_irq_enable_site = NULL;
        fake_time_ns += TICK_NS - 8000000;
        tick(0);
    }
    fake_time_ns += 1000000;
    stop_run();
    run.window_ms = 100;
    const char *r = report_of(&run);
    expect_in(r, "source tick at 100 Hz (");
    expect_in(r, "tick held off by interrupts-off code: cpu 0 24 ms (24%); let in at fn+0x10 (");
    expect_in(r, "\npercentages are of weight, not of sample counts: a held-off tick weighs the ticks it stood "
                 "for\n");
    expect_in(r, "fn+0x10 [let in after 8.0 ms irqs off]\n");
    expect_in(r, "fn+0x10\n");
    profiler_release();
}

/* The tick's lateness is measured on the clock each sample reads anyway, against the schedule its ticks keep,
 * not read from the timer (an MMIO read). A timer whose period differs from the clock's reckoning by 0.1%
 * either way (their two calibrations never agree exactly) makes no punctual tick late over 1000 ticks, and a
 * tick held off among them is still measured to within a hundredth of a period. */
static void the_tick_schedule_follows_a_drifting_timer(void **state)
{
    (void)state;
    for (int sign = -1; sign <= 1; sign += 2) {
        print_message("timer %s than the clock says\n", sign < 0 ? "faster" : "slower");
        boot(&models[MODEL_NO_PMU]); /* the tick samples */
        start_run_from(0);
        int64_t period = TICK_NS + sign * (TICK_NS / 1000);
        for (int i = 0; i < 1000; i++) {
            fake_time_ns += period;
            tick(0);
        }
        assert_int_equal(account(0)->late_ticks, 0);
        fake_time_ns += period + 7000000;
        fake_irq_enable_site = "popf";
        tick(0);
        fake_irq_enable_site = NULL;
        fake_time_ns += period - 7000000;
        tick(0);
        stop_run();
        const struct profiler_cpu_run *c = account(0);
        assert_int_equal(c->late_ticks, 1);
        assert_int_equal(c->let_in_ticks, 1);
        assert_true(c->held_off_ns >= 7000000 - TICK_NS / 100 && c->held_off_ns <= 7000000 + TICK_NS / 100);
        assert_int_equal(c->late_elsewhere_ns, 0);
        assert_int_equal(ring_count(0), 1003);
        profiler_release();
    }
}

UNIT_MAIN_EACH(NULL, teardown, setup_group, NULL,
               handshake_on_every_model, genuine_nmi_outside_a_run_is_not_claimed,
               arm_fault_leaves_that_cpu_on_the_tick_and_named, stopped_counter_is_noticed,
               nmi_over_budget_doubles_the_period, two_seconds_at_1khz_on_4_cpus_drop_nothing,
               undrained_run_counts_its_drops, interrupts_off_and_in_interrupt_are_marked,
               held_off_ticks_are_told_from_late_ones, the_tick_schedule_follows_a_drifting_timer)
