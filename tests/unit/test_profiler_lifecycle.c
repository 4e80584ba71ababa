/* tests/unit/test_profiler_lifecycle.c: after a run stops, no CPU keeps its counter armed or its LVT entry
 * unmasked, whatever the CPUs were doing -- on every PMU model of the fake CPU (tests/unit/fake_cpu.c). A CPU
 * away during the stop (a descheduled vCPU, one parked by the debugger) takes the stop's request when it comes
 * back, and if its counter overflows first, that NMI disarms it and records nothing; a CPU whose first tick of
 * the run races the stop disarms before the tick returns, and samples nothing; a late overflow's NMI never shares a ring slot with
 * the tick's sample it interrupts; a late overflow's NMI latched across the stop leaves the LVT entry masked; lscpu
 * says which CPUs are armed now, and `monitor pmu` shows each disarmed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "hal/pmu.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler.h"
#include "profiler_counter_fixture.h"
#include "unit_main.h"

static bool counts(const struct model *m) { return m->verdict == PMU_COUNTS; }

/* What the hardware says, not the driver's flag: is cpu's counter able to raise its NMI? */
static bool counter_live_on(unsigned cpu)
{
    fake_cpu_index = cpu;
    struct pmu_snapshot s;
    pmu_snapshot_this_cpu(&s);
    return s.counting && s.pmi_enabled && s.globally_enabled && !s.lvt_masked;
}

static const char *monitor_pmu(unsigned cpu);

static void expect_disarmed(unsigned cpu)
{
    fake_cpu_index = cpu;
    if (pmu_armed_this_cpu())
        fail_msg("cpu %u is still armed", cpu);
    if (!(fake.cpu[cpu].lvtpc & LVT_MASK_BIT))
        fail_msg("cpu %u's LVT performance-counter entry is unmasked (0x%x)", cpu, fake.cpu[cpu].lvtpc);
    assert_false(counter_live_on(cpu));
}

/* A run on every CPU: each arms on its first tick (or samples on it), then three overflows each. */
static void run_on_every_cpu(void)
{
    start_run();
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
        tick(cpu);
    if (pmu_usable())
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            run_periods(cpu, 3);
            assert_int_equal(ring_count(cpu), 3);
        }
}

/* ---- a CPU away during the stop ------------------------------------------------------------------------ */

static void a_cpu_away_during_the_stop_is_disarmed_before_it_samples(void **state)
{
    (void)state;
    for (unsigned i = 0; i < model_count; i++) {
        for (int overflow_first = 0; overflow_first < 2; overflow_first++) {
            const struct model *m = &models[i];
            print_message("model: %s, %s\n", m->name,
                          overflow_first ? "back with interrupts off: its counter overflows first"
                                         : "back: it takes the stop's request");
            boot(m);
            run_on_every_cpu();
            uint32_t samples = ring_count(2);
            away_cpus = 1u << 2;
            stop_run();
            profiler_release();
            /* Every CPU that began the run was asked; the ones here let go at once. */
            for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
                assert_int_equal(requests_sent[cpu], 1);
                if (cpu != 2)
                    expect_disarmed(cpu);
            }
            unsigned claimed = nmis_claimed;
            if (overflow_first) {
                /* Ten periods before it takes an interrupt: the first overflow's NMI disarms it, and is the only
                 * one; nothing is sampled for the run that is over. */
                run_periods(2, 10);
                assert_true(nmis_claimed - claimed <= (counts(m) ? 1u : 0u));
                expect_disarmed(2);
            }
            cpu_comes_back(2);
            expect_disarmed(2);
            unsigned nmis = fake.nmis_mine + fake.nmis_genuine;
            run_periods(2, 10);
            assert_int_equal(fake.nmis_mine + fake.nmis_genuine, nmis);
            assert_int_equal(ring_count(2), samples);
            assert_int_equal(fake.nmis_genuine, 0);
            for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
                expect_disarmed(cpu);
        }
    }
}

/* ---- a first tick racing the stop ---------------------------------------------------------------------- */

/* The stop, run from CPU 0 at the first thing CPU 1's first tick asks (sched_idle_waits): after that tick read
 * the active word, before it began the run. */
static unsigned clock_reads;
static void stop_at_first_clock_read(void)
{
    if (clock_reads++ != 0)
        return;
    unsigned cpu = fake_cpu_index;
    fake_cpu_index = 0;
    away_cpus = 1u << cpu; /* inside its tick: it ticks no more in the stop's wait */
    stop_run();
    fake_cpu_index = cpu;
}

static void a_first_tick_racing_the_stop_leaves_nothing_armed(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        start_run_from(0);
        clock_reads = 0;
        fake_idle_waits_hook = stop_at_first_clock_read;
        tick(1);
        fake_idle_waits_hook = NULL;
        cpu_comes_back(1);
        profiler_release();
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            expect_disarmed(cpu);
        unsigned nmis = fake.nmis_mine + fake.nmis_genuine;
        run_periods(1, 10);
        assert_int_equal(fake.nmis_mine + fake.nmis_genuine, nmis);
        /* Nor did that tick sample, on any source: its record would have come after the stop's last drain. */
        assert_int_equal(ring_count(1), 0);
    }
}

/* ---- a late NMI inside the tick's sample --------------------------------------------------------------- */

/* An NMI in the middle of the tick's record, between the slot's reserve and its commit: in its stack walk. */
static unsigned nmis_injected;
static void nmi_inside_the_tick_sample(void)
{
    if (nmis_injected)
        return;
    nmis_injected++;
    fake_inject_nmi();
}

static void a_late_nmi_never_shares_a_ring_slot_with_a_tick_sample(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_counting_model(&next));) {
        start_run_from(0);
        run_periods(0, 5);
        /* The counter stops interrupting (its entry masked), and keeps overflowing: the tick that finds it
         * stopped disarms it with an overflow raised, whose NMI may still come. */
        fake.cpu[0].lvtpc |= LVT_MASK_BIT;
        nmis_injected = 0;
        for (int t = 0; t < 8 && account(0)->source == PROFILER_CPU_COUNTER; t++) {
            run_periods(0, 10);
            fake_time_ns += TICK_NS;
            fake_walk_hook = nmi_inside_the_tick_sample;
            tick(0);
            fake_walk_hook = NULL;
        }
        assert_int_equal(account(0)->source, PROFILER_CPU_TICK_STOPPED);
        assert_int_equal(nmis_injected, 1);
        assert_true(fake.last_nmi_mine); /* the late overflow's, claimed */
        /* The tick's sample, alone in its slot. */
        assert_int_equal(ring_count(0), 6);
        assert_int_equal(fake.nmis_genuine, 0);
        stop_run();
        profiler_release();
    }
}

/* Every CPU's last overflow raised its PMI just before the stop, and its NMI was latched (the CPU had NMIs
 * blocked) across the disarm: each comes after the disarm, is claimed as the late overflow's, records nothing --
 * and leaves the LVT entry masked, as the disarm did. */
static void a_late_pmi_latched_across_the_stop_leaves_every_entry_masked(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_counting_model(&next));) {
        run_on_every_cpu();
        fake.hold_nmis = true;
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            run_periods(cpu, 1);
            assert_true(fake.cpu[cpu].nmi_pending);
        }
        stop_run();
        profiler_release();
        unsigned mine = fake.nmis_mine;
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            fake_cpu_index = cpu;
            fake_release_nmis();
            assert_false(fake.cpu[cpu].nmi_pending);
            assert_int_equal(ring_count(cpu), 3);
            expect_disarmed(cpu);
        }
        assert_int_equal(fake.nmis_mine, mine + FAKE_CPUS);
        assert_int_equal(fake.nmis_genuine, 0);
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            expect_in(monitor_pmu(cpu), ", masked\n");
    }
}

/* ---- lscpu --------------------------------------------------------------------------------------------- */

static char described[4096];
static const char *describe(void)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, described, sizeof described);
    pmu_describe(&bs.sink);
    return described;
}

/* What `monitor pmu` prints for cpu (pmu_describe_cpu, run on that CPU). */
static const char *monitor_pmu(unsigned cpu)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, described, sizeof described);
    fake_cpu_index = cpu;
    pmu_describe_cpu(&bs.sink);
    return described;
}

static void lscpu_says_which_cpus_are_armed_now(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        expect_in(describe(), "armed now:  none\n");
        start_run_from(0);
        tick(2);
        expect_in(describe(), counts(m) ? "armed now:  cpu 0, 2\n" : "armed now:  none\n");
        stop_run();
        profiler_release();
        expect_in(describe(), "armed now:  none\n");
        /* And the debugger's view of each CPU: its flag down, its LVT entry masked. */
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            char line[32];
            snprintf(line, sizeof line, "cpu %u: armed no", cpu);
            expect_in(monitor_pmu(cpu), line);
            expect_in(monitor_pmu(cpu), ", masked\n");
        }
    }
}

UNIT_MAIN_EACH(NULL, teardown, setup_group, NULL,
               a_cpu_away_during_the_stop_is_disarmed_before_it_samples,
               a_first_tick_racing_the_stop_leaves_nothing_armed,
               a_late_nmi_never_shares_a_ring_slot_with_a_tick_sample,
               a_late_pmi_latched_across_the_stop_leaves_every_entry_masked, lscpu_says_which_cpus_are_armed_now)
