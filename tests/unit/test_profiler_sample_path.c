/* tests/unit/test_profiler_sample_path.c: the sample path takes no lock, allocates nothing and prints nothing
 * (kernel/profiler.c's promise, and hal/pmu.h's for the calls under it). Every profiler_tick, profiler_nmi and
 * profiler_stop_request -- on the tick source and on each counting PMU model, outside a run, in one (the first
 * tick arms, later ticks watch the counter, overflows sample), while it stops (the stop's requests, the
 * disarming tick, a late overflow) and after it -- is run with kmalloc/kzalloc/kfree counting here and
 * hal/spinlock.h replaced by counting stand-ins; only what happens inside those calls is counted. The run's
 * start and stop themselves (task context) may do both. Also: what a tick costs in hardware accesses -- outside
 * a run and on an armed CPU during one, no clock read, no MSR, no LVT write, on every counting model; on the
 * tick source, one clock read (the sample's time, which also measures its lateness) -- and the ring the
 * profiler allocates holds exactly PROFILE_RING_RECORDS = 1024 records, the 1025th a drop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_kernel.h"
#include "fake_hal.h"
#include "hal/kernel_entry.h"
#include "hal/pmu.h"
#include "kernel/heap.h"
#include "kernel/profiler.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "unit_main.h"

/* ---- the kernel around the profiler, counting ---------------------------------------------------------- */

/* Tasks, their stacks, the walk (pc alone) and the stop's sleep are the fake kernel's
 * (tests/unit/fake_kernel.c), the sleep's ticks this file's (stop_tick); the text is this file's. */
static unsigned char text[64];
static struct symtab tab;

static unsigned in_sample_path; /* inside profiler_tick or profiler_nmi */
static unsigned allocations, sample_path_allocations, sample_path_calls;

void *kmalloc(size_t size)
{
    allocations++;
    sample_path_allocations += in_sample_path != 0;
    return malloc(size);
}
void *kzalloc(size_t size)
{
    allocations++;
    sample_path_allocations += in_sample_path != 0;
    return calloc(1, size);
}
void kfree(void *p)
{
    sample_path_allocations += in_sample_path != 0 && p;
    free(p);
}

/* What the counting stand-ins and the fake's log say about the sample path, summed over its calls. */
static unsigned sample_path_locks, sample_path_log_lines;

static struct context busy_ctx(uint64_t vector)
{
    return fake_interrupt((uintptr_t)&text[16], vector);
}

static void enter(unsigned *locks, unsigned *lines)
{
    in_sample_path++;
    *locks = fake_spin_acquires;
    *lines = fake_log_lines;
    sample_path_calls++;
}

static void leave(unsigned locks, unsigned lines)
{
    sample_path_locks += fake_spin_acquires - locks;
    sample_path_log_lines += fake_log_lines - lines;
    in_sample_path--;
}

/* The kernel's NMI path (arch/x86_64/interrupts.c): the counter's claim and the sample. */
static bool nmi_path(void)
{
    unsigned locks, lines;
    struct context ctx = busy_ctx(2);
    enter(&locks, &lines);
    bool mine = profiler_nmi(&ctx, fake_cycles);
    leave(locks, lines);
    return mine;
}

static void tick(unsigned cpu)
{
    unsigned locks, lines;
    struct context ctx = busy_ctx(0xE0);
    fake_cpu_index = cpu;
    enter(&locks, &lines);
    profiler_tick(&ctx);
    leave(locks, lines);
}

static void run_periods(unsigned cpu, unsigned n)
{
    fake_cpu_index = cpu;
    uint64_t period = pmu_period_cycles() ? pmu_period_cycles() : fake_cycles_per_ms;
    for (unsigned i = 0; i < n; i++) {
        fake_advance(period);
        fake_cycles += period;
    }
}

/* The stop's request to a CPU (hal/cpu.h), in that CPU's interrupt: taken at once on CPUs 0 and 1; on 2 and 3
 * only after their tick in the stop's wait has let go, when it finds nothing left to do. */
static bool request_pending[FAKE_CPUS];
static unsigned requests_taken;
static void take_request(unsigned cpu)
{
    unsigned locks, lines, caller = fake_cpu_index;
    fake_cpu_index = cpu;
    enter(&locks, &lines);
    profiler_stop_request();
    leave(locks, lines);
    fake_cpu_index = caller;
    requests_taken++;
}
void cpu_send_profiler_stop(unsigned cpu)
{
    if (cpu < 2)
        take_request(cpu);
    else
        request_pending[cpu] = true;
}

/* Each CPU's tick in the stop's wait (fake_tick_hook): its counter overflows once more (a late NMI,
 * dropped), then it ticks and lets go, then takes a request still pending. */
static void stop_tick(unsigned cpu)
{
    if (pmu_usable())
        run_periods(cpu, 1);
    tick(cpu);
    if (request_pending[cpu]) {
        request_pending[cpu] = false;
        take_request(cpu);
    }
}

/* ---- the models ---------------------------------------------------------------------------------------- */

struct model {
    const char *name;
    void (*setup)(void);
    bool counts;
};

static const struct model models[] = {
    { "tick (no pmu)", fake_model_no_pmu, false },
    { "tick (counter without interrupt)", fake_model_no_interrupt, false },
    { "intel v2", fake_model_intel_v2, true },
    { "intel v4 with freeze set by firmware", fake_model_intel_v4_freeze, true },
    { "intel hybrid", fake_model_intel_hybrid, true },
    { "amd zen 2 (sign bit)", fake_model_amd_zen2, true },
    { "amd zen 4 (perfmon v2)", fake_model_amd_zen4, true },
};

static void boot(const struct model *m)
{
    fake_boot(m->setup, nmi_path);
    fake_tasks_reset(0);
    fake_symtab = &tab;
    fake_tick_hook = stop_tick;
    sample_path_allocations = sample_path_locks = sample_path_log_lines = sample_path_calls = 0;
}

/* Every model in turn, booted and named in the test's output; *next (0 to begin) moves past it. NULL after
 * the last. */
static const struct model *boot_next_model(unsigned *next)
{
    if (*next >= sizeof models / sizeof models[0])
        return NULL;
    const struct model *m = &models[(*next)++];
    print_message("model: %s\n", m->name);
    boot(m);
    return m;
}

static void ticks_and_periods(unsigned rounds)
{
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            tick(cpu);
            run_periods(cpu, 3);
            fake_time_ns += 10000000;
        }
}

static void no_lock_no_allocation_on_the_sample_path(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        /* Outside any run: ticks, and a genuine NMI (not claimed: the test catches the panic's stand-in). */
        ticks_and_periods(2);
        fake_cpu_index = 0;
        assert_false(fake_inject_nmi());

        struct profile_run run = { 0 };
        assert_int_equal(profiler_start(&run), PROFILER_OK);
        assert_int_equal(pmu_usable(), m->counts);
        unsigned nmis_before = fake.nmis_mine;
        ticks_and_periods(5); /* the first tick arms; overflows sample; later ticks watch the counter */
        if (m->counts)
            assert_true(fake.nmis_mine - nmis_before >= 5 * 3 * FAKE_CPUS);
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            assert_true(profile_ring_count(&run.rings[cpu]) > 0);
        requests_taken = 0;
        profiler_stop(&run); /* its requests, the disarming ticks and a late overflow each (task_sleep_ms) */
        assert_int_equal(requests_taken, FAKE_CPUS);
        ticks_and_periods(2); /* after the run */
        profiler_release();

        assert_true(sample_path_calls > 0);
        assert_int_equal(sample_path_allocations, 0);
        assert_int_equal(sample_path_locks, 0);
        assert_int_equal(sample_path_log_lines, 0);
    }
    assert_true(allocations > 0); /* the rings were allocated, at start: the counting works */
}

/* The hardware one tick touched: clock reads (RDTSC), MSR reads and writes, LVT writes (MMIO on the xAPIC). */
struct tick_cost {
    unsigned long clock;
    unsigned msr, lvt;
};

static struct tick_cost counted_tick(unsigned cpu)
{
    unsigned long clock = fake_clock_reads;
    unsigned msr = fake.msr_accesses, lvt = fake.lvt_writes;
    tick(cpu);
    struct tick_cost cost = { fake_clock_reads - clock, fake.msr_accesses - msr, fake.lvt_writes - lvt };
    return cost;
}

static void expect_cost(struct tick_cost cost, unsigned long clock, const char *what)
{
    if (cost.clock != clock || cost.msr || cost.lvt)
        fail_msg("%s: %lu clock reads (expected %lu), %u MSR accesses, %u LVT writes (expected none)", what,
                 cost.clock, clock, cost.msr, cost.lvt);
}

static void a_tick_reads_no_clock_and_no_register_unless_it_samples(void **state)
{
    (void)state;
    const struct model *m;
    for (unsigned next = 0; (m = boot_next_model(&next));) {
        /* Outside a run: the one atomic read, nothing else. */
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            expect_cost(counted_tick(cpu), 0, "an idle tick before any run");
            run_periods(cpu, 2);
        }

        struct profile_run run = { 0 };
        assert_int_equal(profiler_start(&run), PROFILER_OK);
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
            tick(cpu); /* the first tick of the run arms (MSR and LVT writes: once a run) or samples */
        for (unsigned round = 0; round < 6; round++) {
            for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
                /* Busy with overflows; busy without one (a silence too short to mean anything); idle. */
                if (round % 3 == 0)
                    run_periods(cpu, 3);
                if (round % 3 == 2)
                    fake_idle_waits[cpu]++;
                fake_time_ns += 10000000;
                uint32_t before = profile_ring_count(&run.rings[cpu]);
                struct tick_cost cost = counted_tick(cpu);
                if (m->counts) {
                    expect_cost(cost, 0, "an armed cpu's tick");
                    assert_true(pmu_armed_this_cpu());
                    assert_int_equal(profile_ring_count(&run.rings[cpu]), before);
                } else {
                    expect_cost(cost, 1, "a sampling tick"); /* the record's time, lateness measured on it */
                    assert_int_equal(profile_ring_count(&run.rings[cpu]), before + 1);
                }
            }
        }
        if (m->counts)
            for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
                assert_int_equal(run.cpu[cpu].source, PROFILER_CPU_COUNTER);
        profiler_stop(&run);
        profiler_release();

        /* After the run (every CPU disarmed on its tick): the one atomic read again. */
        for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
            run_periods(cpu, 2);
            expect_cost(counted_tick(cpu), 0, "an idle tick after a run");
        }
    }
}

/* The stand-ins do count: a lock taken where the test looks is seen. */
static void the_lock_counter_counts(void **state)
{
    (void)state;
    spinlock_t lock = SPINLOCK_INIT;
    unsigned before = fake_spin_acquires;
    unsigned long flags = spin_lock_irqsave(&lock);
    spin_unlock_irqrestore(&lock, flags);
    assert_int_equal(fake_spin_acquires - before, 1);
}

/* The ring the profiler allocates holds exactly 1024 records a CPU: without a drain, on the tick and on the
 * counter, the 1024th sample is kept and the 1025th is a drop, counted. */
static void the_ring_holds_1024_records(void **state)
{
    (void)state;
    assert_int_equal(PROFILE_RING_RECORDS, 1024);
    static const struct model *const sources[] = { &models[0], &models[2] };
    for (unsigned i = 0; i < 2; i++) {
        print_message("model: %s\n", sources[i]->name);
        boot(sources[i]);
        struct profile_run run = { 0 };
        assert_int_equal(profiler_start(&run), PROFILER_OK);
        const struct profile_ring *ring = &run.rings[1];
        tick(1); /* the tick's first sample, or the arming tick */
        for (unsigned n = profile_ring_count(ring); n < 1024; n = profile_ring_count(ring)) {
            if (sources[i]->counts)
                run_periods(1, 1);
            else
                tick(1);
            assert_int_equal(profile_ring_count(ring), n + 1);
        }
        assert_int_equal(profile_ring_drops(ring), 0);
        if (sources[i]->counts)
            run_periods(1, 1);
        else
            tick(1);
        assert_int_equal(profile_ring_count(ring), 1024);
        assert_int_equal(profile_ring_drops(ring), 1);
        assert_int_equal(profile_ring_count(&run.rings[0]), 0); /* one CPU's ring, not a shared one */
        profiler_stop(&run);
        profiler_release();
    }
}

UNIT_MAIN(NULL, NULL,
          no_lock_no_allocation_on_the_sample_path, the_lock_counter_counts,
          a_tick_reads_no_clock_and_no_register_unless_it_samples, the_ring_holds_1024_records)
