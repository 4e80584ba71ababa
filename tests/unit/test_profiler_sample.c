/* tests/unit/test_profiler_sample.c: the profiler's sample path and run control (kernel/profiler.c) on fake
 * interrupted contexts over a synthetic stack and synthetic text: frame 0 is the context's instruction, the
 * callers come from its frame chain (or from the stack pointer on a first instruction or a ret), every field
 * of the record is filled, each CPU writes its own ring, a full ring counts drops, nothing is taken while no
 * run is active, and start/stop/release keep one run at a time with rings allocated once. The counter's samples
 * are taken as the kernel takes them: a counter run on the fake Intel v2 CPU (tests/unit/fake_cpu.h), the CPU's
 * counter armed by its first tick, and each overflow's NMI delivered by the fake CPU to profiler_nmi() on the
 * interrupted context; the tick's are profiler_tick(). */
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
#include "kernel/heap.h"
#include "kernel/profiler.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "unit_main.h"

/* ---- fakes ------------------------------------------------------------------------------------------ */

/* Text: four 64-byte functions, each "push %rbp; mov %rsp,%rbp; nop...; ret". The tasks, their stacks
 * (fake_stack) and the stop's sleep (a tick on each CPU at the text's start) are the fake kernel's
 * (tests/unit/fake_kernel.c); the walk is the real one, kernel/stacktrace.c. */
static unsigned char text[4 * 64];
static struct symtab tab;

static uintptr_t fn(unsigned i, unsigned offset) { return (uintptr_t)&text[i * 64 + offset]; }

static int live_allocations;
static bool allocations_fail;

void *kmalloc(size_t size)
{
    if (allocations_fail)
        return NULL;
    live_allocations++;
    return malloc(size);
}

/* ---- a synthetic stack ------------------------------------------------------------------------------- */

/* On CPU cpu: depth frames at fake_stack[cpu][32 + 8*i] = [saved rbp][return address ret(i)], where ret(i) is
 * fn(1 + i % 3, 0x20 + i). Returns the innermost frame's address (the interrupted rbp). */
static uintptr_t ret_addr(unsigned i) { return fn(1 + i % 3, 0x20 + i); }

static uintptr_t build_stack(unsigned cpu, unsigned depth)
{
    memset(fake_stack[cpu], 0, sizeof fake_stack[cpu]);
    for (unsigned i = 0; i < depth; i++) {
        uint64_t *frame = &fake_stack[cpu][32 + 8 * i];
        frame[0] = i + 1 < depth ? (uint64_t)(uintptr_t)&fake_stack[cpu][32 + 8 * (i + 1)] : 0;
        frame[1] = ret_addr(i);
    }
    return (uintptr_t)&fake_stack[cpu][32];
}

/* ---- helpers ------------------------------------------------------------------------------------------ */

static struct profile_run run;
static bool running;

static void start(void)
{
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    running = true;
}

static void stop_and_release(void)
{
    if (running) {
        profiler_stop(&run);
        profiler_release();
        running = false;
    }
}

/* ---- the counter's NMI ------------------------------------------------------------------------------------ */

/* The kernel's NMI path as arch/x86_64/interrupts.c runs it, on the context the NMI interrupted (nmi_ctx):
 * profiler_nmi claims the NMI when it is this CPU's counter overflowing (pmu_nmi_is_mine), and samples the
 * context when the counter is this CPU's source in the run. */
static struct context nmi_ctx;
static bool nmi_path(void) { return profiler_nmi(&nmi_ctx, cycles()); }

/* The next run samples on the counter: the fake Intel v2 CPU (fake_reset() first: CPU 0 current), its PMU
 * selected as at boot, its NMIs to nmi_path. */
static void with_the_counter(void)
{
    fake_model_intel_v2();
    pmu_reset_for_tests();
    pmu_select(NULL);
    fake.nmi_handler = nmi_path;
}

/* A counter run started, and cpu's counter armed by cpu's first tick of it (which samples nothing); cpu is the
 * current CPU after. */
static void start_on_the_counter(unsigned cpu)
{
    with_the_counter();
    start();
    assert_null(run.tick_reason);
    fake_cpu_index = cpu;
    struct context at_tick = fake_interrupt(fn(0, 4), 0xE0);
    profiler_tick(&at_tick);
    assert_true(pmu_armed_this_cpu());
    assert_int_equal(run.cpu[cpu].source, PROFILER_CPU_COUNTER);
    if (cpu < run.ncpus)
        assert_int_equal(profile_ring_count(&run.rings[cpu]), 0);
}

/* The counter's NMI on the current CPU, interrupting ctx: a period of the armed counter passes, it overflows,
 * and the fake CPU delivers the NMI, which the counter claims. */
static void counter_nmi_at(const struct context *ctx)
{
    nmi_ctx = *ctx;
    unsigned claimed = fake.nmis_mine;
    fake_advance(pmu_period_cycles());
    assert_int_equal(fake.nmis_mine, claimed + 1);
    assert_int_equal(fake.nmis_genuine, 0);
}

/* Ticks on the current CPU, with no overflow between them, until the profiler finds its counter stopped (a few
 * busy ticks: kernel/profiler.c's watch_counter): the tick that finds it samples ctx, as every later tick does,
 * and the counter's NMIs record nothing more in this run. The ticks before it sample nothing. */
static void tick_until_the_counter_is_found_stopped(const struct context *ctx)
{
    unsigned cpu = fake_cpu_index;
    for (unsigned ticks = 0; run.cpu[cpu].source == PROFILER_CPU_COUNTER; ticks++) {
        assert_true(ticks < 16);
        profiler_tick(ctx);
    }
    assert_int_equal(run.cpu[cpu].source, PROFILER_CPU_TICK_STOPPED);
}

/* What a counter NMI's record weighs: the counter's period, pmu_period_cycles() -- a millisecond of the fake's
 * 2 GHz clock -- not a tick's weight (the tick's period in cycles, 20000000, on a counter run). */
#define COUNTER_PERIOD_CYCLES 2000000

/* The context of a sample at fn(0, 8) in a two-deep chain built on cpu's stack, the run started. */
static struct context start_at_a_shallow_stack(unsigned cpu)
{
    uintptr_t rbp = build_stack(cpu, 2);
    struct context ctx = fake_context(fn(0, 8), rbp - 8, rbp);
    start();
    return ctx;
}

/* The same on a counter run, cpu's counter armed by its first tick. */
static struct context start_on_the_counter_at_a_shallow_stack(unsigned cpu)
{
    uintptr_t rbp = build_stack(cpu, 2);
    struct context ctx = fake_context(fn(0, 8), rbp - 8, rbp);
    start_on_the_counter(cpu);
    return ctx;
}

/* What CPU 0's task is labelled with in the deep-chain tests: a record must carry this very address. */
static const int label_set_stand_in = 0;

/* The context of a sample at pc in a twelve-deep chain built on CPU 0's stack, its task labelled with the stand-in,
 * a counter run started with CPU 0's counter armed, and the clock at time_ns. */
static struct context start_labelled_at_a_deep_stack(uintptr_t pc, int64_t time_ns)
{
    atomic_store(&fake_task[0].labels, (const struct label_set *)&label_set_stand_in);
    uintptr_t rbp = build_stack(0, 12);
    struct context ctx = fake_context(pc, rbp - 24, rbp);
    start_on_the_counter(0);
    fake_time_ns = time_ns;
    return ctx;
}

static const struct profile_record *only_record(unsigned cpu)
{
    assert_int_equal(profile_ring_count(&run.rings[cpu]), 1);
    return profile_ring_peek(&run.rings[cpu]);
}

static int setup(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 4; i++) {
        memset(&text[i * 64], 0x90, 64);
        text[i * 64] = 0x55;
        text[i * 64 + 1] = 0x48, text[i * 64 + 2] = 0x89, text[i * 64 + 3] = 0xe5;
        text[i * 64 + 63] = 0xc3;
    }
    fake_image(&tab, NULL, 0, "", text, sizeof text);
    fake_tick_pc = (uintptr_t)text;
    fake_tasks_reset(10);
    /* No PMU (a CPU without a vendor): a run samples on the tick unless the test gives it the counter. */
    fake_reset();
    pmu_reset_for_tests();
    allocations_fail = false;
    fake_cpu_count = 2;
    fake_cpu_index = 0;
    fake_time_ns = 1000000000;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    stop_and_release();
    return 0;
}

/* ---- run control -------------------------------------------------------------------------------------- */

static void test_start_without_memory_gives_the_claim_back(void **state)
{
    (void)state;
    /* First in the file: no ring exists yet. */
    allocations_fail = true;
    assert_int_equal(profiler_start(&run), PROFILER_NO_MEMORY);
    allocations_fail = false;
    start();
    assert_int_equal(run.ncpus, 2);
    assert_non_null(run.rings[0].records);
    assert_non_null(run.rings[1].records);
}

static void test_second_start_is_busy(void **state)
{
    (void)state;
    start();
    struct profile_run other = { 0 };
    assert_int_equal(profiler_start(&other), PROFILER_BUSY);
    profiler_stop(&run);
    /* Stopped but not yet reported: still busy. */
    assert_int_equal(profiler_start(&other), PROFILER_BUSY);
    profiler_release();
    running = false;
    assert_int_equal(profiler_start(&other), PROFILER_OK);
    profiler_stop(&other);
    profiler_release();
}

static void test_rings_allocated_once_and_kept(void **state)
{
    (void)state;
    start();
    struct profile_record *first0 = run.rings[0].records;
    stop_and_release();
    int allocated = live_allocations;
    for (int i = 0; i < 50; i++) {
        start();
        assert_ptr_equal(run.rings[0].records, first0);
        stop_and_release();
    }
    assert_int_equal(live_allocations, allocated);
    /* A CPU that came online since gets its ring at the next start; the others keep theirs. */
    fake_cpu_count = 3;
    start();
    assert_int_equal(run.ncpus, 3);
    assert_int_equal(live_allocations, allocated + 1);
    assert_ptr_equal(run.rings[0].records, first0);
}

static void test_run_numbers_are_distinct_and_never_zero(void **state)
{
    (void)state;
    start();
    uint32_t first = run.run;
    assert_int_not_equal(first, 0);
    stop_and_release();
    start();
    assert_int_equal(run.run, first + 1);
    assert_string_equal(run.source, "tick");
    assert_string_equal(run.tick_reason, "no PMU backend for CPU vendor \"\""); /* the fake CPU has no vendor */
    assert_int_equal(run.period_ns, 10000000); /* the 100 Hz tick */
}

/* A counter run states the period the PMU layer armed (pmu_period_cycles) in nanoseconds: a millisecond of
 * cycles, and the floor of 10000 cycles on a slow clock. (It leaves the PMU chosen; the next setup forgets it.) */
static void test_counter_run_states_the_counters_period(void **state)
{
    (void)state;
    fake_model_intel_v2();
    pmu_reset_for_tests();
    pmu_select(NULL);
    start();
    assert_string_equal(run.source_name, "pmu/nmi intel fixed-ctr1");
    assert_int_equal(run.period_ns, 1000000);
    stop_and_release();

    fake_cycles_per_ms = 1000; /* 1 MHz: a millisecond would be 1000 cycles, under the floor */
    fake_model_intel_v2();
    pmu_reset_for_tests();
    pmu_select(NULL);
    start();
    assert_int_equal(run.period_ns, 10000ull * 1000000 / 1000);
    stop_and_release();
    fake_cycles_per_ms = 2000000;
}

/* The window a run measures, stopped elapsed_ns after its start; the profiler released after. */
static uint32_t window_of_a_run_lasting(int64_t elapsed_ns)
{
    start();
    fake_time_ns += elapsed_ns;
    profiler_stop(&run);
    uint32_t window_ms = run.window_ms;
    profiler_release();
    running = false;
    return window_ms;
}

static void test_window_is_measured(void **state)
{
    (void)state;
    assert_int_equal(window_of_a_run_lasting(1499999), 1);
    assert_int_equal(window_of_a_run_lasting(2000500000), 2001);
}

static void test_start_empties_the_rings(void **state)
{
    (void)state;
    uintptr_t rbp = build_stack(0, 2);
    struct context ctx = fake_context(fn(0, 8), rbp - 16, rbp);
    start_on_the_counter(0);
    for (int i = 0; i < PROFILE_RING_RECORDS + 3; i++)
        counter_nmi_at(&ctx);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 3);
    stop_and_release();
    start();
    assert_int_equal(profile_ring_count(&run.rings[0]), 0);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 0);
}

/* ---- the sample -------------------------------------------------------------------------------------- */

static void test_record_of_a_deep_chain(void **state)
{
    (void)state;
    struct context ctx = start_labelled_at_a_deep_stack(fn(0, 0x11), 1234567890);
    counter_nmi_at(&ctx);
    const struct profile_record *rec = only_record(0);
    assert_int_equal(rec->nframes, PROFILE_MAX_FRAMES);
    assert_int_equal(rec->frames[0], fn(0, 0x11)); /* exactly the interrupted instruction */
    for (unsigned i = 1; i < PROFILE_MAX_FRAMES; i++)
        assert_int_equal(rec->frames[i], ret_addr(i - 1));
    assert_int_equal(rec->pid, 10);
    assert_int_equal(rec->cpu, 0);
    assert_int_equal(rec->time_ns, 1234567890);
    assert_ptr_equal(rec->labels, &label_set_stand_in);
    assert_int_equal(rec->run, run.run);
    /* Interrupts on, not in an interrupt handler; weighing the counter's period (what profiler_nmi records). */
    assert_int_equal(rec->flags, 0);
    assert_int_equal(rec->held_off_us, 0);
    assert_int_equal(rec->period, COUNTER_PERIOD_CYCLES);
}

static void test_short_chain(void **state)
{
    (void)state;
    uintptr_t rbp = build_stack(0, 3);
    struct context ctx = fake_context(fn(2, 0x30), rbp - 8, rbp);
    start_on_the_counter(0);
    counter_nmi_at(&ctx);
    const struct profile_record *rec = only_record(0);
    assert_int_equal(rec->nframes, 4);
    assert_int_equal(rec->frames[0], fn(2, 0x30));
    assert_int_equal(rec->frames[1], ret_addr(0));
    assert_int_equal(rec->frames[2], ret_addr(1));
    assert_int_equal(rec->frames[3], ret_addr(2));
    assert_null(rec->labels);
}

/* A sample on CPU 0 at pc, interrupted with rbp still the caller's frame of the 3-deep chain and sp at
 * fake_stack[0][20] (where the test put what the prologue or ret leaves there): 5 frames, pc, then caller, then
 * the chain from ret_addr(0). Returns the record. */
static const struct profile_record *expect_direct_caller(uintptr_t pc, uintptr_t rbp, uintptr_t caller)
{
    struct context ctx = fake_context(pc, (uintptr_t)&fake_stack[0][20], rbp);
    start_on_the_counter(0);
    counter_nmi_at(&ctx);
    const struct profile_record *rec = only_record(0);
    assert_int_equal(rec->nframes, 5);
    assert_int_equal(rec->frames[0], pc);
    assert_int_equal(rec->frames[1], caller);
    assert_int_equal(rec->frames[2], ret_addr(0));
    return rec;
}

static void test_sample_on_first_instruction_keeps_direct_caller(void **state)
{
    (void)state;
    /* Interrupted on push %rbp: the function's frame is not on the chain yet, and its caller's return
     * address is at [sp]; rbp is still the caller's frame. That the push is recognised at all shows the
     * sampler handed the walk the kernel's text bounds from kernel_symtab(). */
    uintptr_t rbp = build_stack(0, 3);
    fake_stack[0][20] = fn(3, 0x2a);
    expect_direct_caller(fn(1, 0), rbp, fn(3, 0x2a));
}

static void test_sample_on_ret_keeps_direct_caller(void **state)
{
    (void)state;
    /* Interrupted on ret: the frame was popped, rbp is the caller's again, [sp] is where ret returns to. */
    uintptr_t rbp = build_stack(0, 3);
    fake_stack[0][20] = fn(3, 0x2b);
    expect_direct_caller(fn(2, 63), rbp, fn(3, 0x2b));
}

static void test_sample_on_mov_rsp_rbp_keeps_direct_caller(void **state)
{
    (void)state;
    /* Interrupted between push %rbp and mov %rsp,%rbp: [sp] is the saved rbp, [sp+8] the return address. */
    uintptr_t rbp = build_stack(0, 3);
    fake_stack[0][20] = rbp;
    fake_stack[0][21] = fn(3, 0x2c);
    const struct profile_record *rec = expect_direct_caller(fn(2, 1), rbp, fn(3, 0x2c));
    assert_int_equal(rec->frames[4], ret_addr(2));
}

/* profiler_nmi (the counter's NMI) and profiler_tick take the sample through separate inlined copies of one
 * path: the records must be the same. One CPU, one run: the counter's NMI samples first, then the counter is
 * found stopped and the tick that finds it samples (a CPU's tick samples only once its counter is not armed). */
static void test_sample_and_tick_write_the_same_record(void **state)
{
    (void)state;
    struct context ctx = start_labelled_at_a_deep_stack(fn(1, 0x13), 777);
    counter_nmi_at(&ctx);
    tick_until_the_counter_is_found_stopped(&ctx);
    assert_int_equal(profile_ring_count(&run.rings[0]), 2);
    struct profile_record a = *profile_ring_peek(&run.rings[0]);
    profile_ring_advance(&run.rings[0]);
    const struct profile_record *b = profile_ring_peek(&run.rings[0]);
    assert_int_equal(a.nframes, PROFILE_MAX_FRAMES);
    assert_int_equal(b->nframes, a.nframes);
    assert_memory_equal(b->frames, a.frames, sizeof a.frames);
    assert_int_equal(b->pid, a.pid);
    assert_int_equal(b->cpu, a.cpu);
    assert_int_equal(b->time_ns, 777);
    assert_int_equal(a.time_ns, 777);
    assert_int_equal(b->run, a.run);
    assert_ptr_equal(b->labels, &label_set_stand_in);
    assert_ptr_equal(a.labels, &label_set_stand_in);
    /* What each weighs differs with the source: the NMI's record the counter's period, the tick's its period in
     * the counter run's unit (10 ms of the fake's 2 GHz clock). */
    assert_int_equal(a.period, COUNTER_PERIOD_CYCLES);
    assert_int_equal(b->period, 20000000);
}

static void test_corrupt_frame_pointer_still_gives_frame_zero(void **state)
{
    (void)state;
    build_stack(0, 3);
    struct context ctx = fake_context(fn(0, 9), (uintptr_t)&fake_stack[0][10], 0xdeadbeef);
    start_on_the_counter(0);
    counter_nmi_at(&ctx);
    const struct profile_record *rec = only_record(0);
    assert_int_equal(rec->nframes, 1);
    assert_int_equal(rec->frames[0], fn(0, 9));
}

static void test_no_current_task(void **state)
{
    (void)state;
    uintptr_t rbp = build_stack(0, 3);
    struct context ctx = fake_context(fn(0, 9), rbp - 8, rbp);
    start_on_the_counter(0);
    fake_no_task = true;
    counter_nmi_at(&ctx);
    const struct profile_record *rec = only_record(0);
    assert_int_equal(rec->pid, 0);
    assert_int_equal(rec->nframes, 1); /* no stack to walk */
    assert_int_equal(rec->frames[0], fn(0, 9));
    /* Even on a first instruction with a readable [sp]: without a task there is no stack to read it from. The
     * tick's sample, on a run of the tick (no PMU): with no task to call it busy, a counter run's tick never
     * finds the counter stopped, so it would not sample on CPU 0. */
    profile_ring_advance(&run.rings[0]);
    stop_and_release();
    fake_reset();
    pmu_reset_for_tests();
    start();
    struct context at_push = fake_context(fn(1, 0), rbp - 8, rbp);
    profiler_tick(&at_push);
    rec = only_record(0);
    assert_int_equal(rec->pid, 0);
    assert_null(rec->labels);
    assert_int_equal(rec->run, run.run);
    assert_int_equal(rec->nframes, 1);
    assert_int_equal(rec->frames[0], fn(1, 0));
}

static void test_each_cpu_writes_its_own_ring(void **state)
{
    (void)state;
    uintptr_t rbp0 = build_stack(0, 2);
    uintptr_t rbp1 = build_stack(1, 2);
    struct context c0 = fake_context(fn(0, 8), rbp0 - 8, rbp0);
    struct context c1 = fake_context(fn(3, 8), rbp1 - 8, rbp1);
    start();
    fake_cpu_index = 1;
    profiler_tick(&c1);
    profiler_tick(&c1);
    fake_cpu_index = 0;
    profiler_tick(&c0);
    assert_int_equal(profile_ring_count(&run.rings[0]), 1);
    assert_int_equal(profile_ring_count(&run.rings[1]), 2);
    const struct profile_record *rec = profile_ring_peek(&run.rings[1]);
    assert_int_equal(rec->cpu, 1);
    assert_int_equal(rec->pid, 11);
    assert_int_equal(rec->frames[0], fn(3, 8));
    assert_int_equal(profile_ring_peek(&run.rings[0])->pid, 10);
}

static void test_cpu_without_a_ring_takes_nothing(void **state)
{
    (void)state;
    /* CPU 5, not online at start: its first tick arms its counter (and samples nothing), the counter's NMI is
     * claimed and its sample has no ring to go to, nor has the tick's once the counter is found stopped. */
    struct context ctx = start_on_the_counter_at_a_shallow_stack(5);
    counter_nmi_at(&ctx);
    tick_until_the_counter_is_found_stopped(&ctx);
    fake_cpu_index = MAX_CPUS + 3; /* nonsense index: ignored, not written out of bounds */
    assert_false(profiler_nmi(&ctx, cycles())); /* not the counter's: the claim knows no such CPU */
    fake_cpu_index = 0;
    for (unsigned i = 0; i < run.ncpus; i++)
        assert_int_equal(profile_ring_count(&run.rings[i]), 0);
}

static void test_full_ring_counts_drops(void **state)
{
    (void)state;
    /* Filled by the counter's NMIs; then one more NMI's sample and, once the counter is found stopped, the tick's
     * (a CPU's tick samples only once its counter is not armed) are each dropped and counted. */
    struct context ctx = start_on_the_counter_at_a_shallow_stack(0);
    for (int i = 0; i < PROFILE_RING_RECORDS; i++)
        counter_nmi_at(&ctx);
    assert_int_equal(profile_ring_count(&run.rings[0]), PROFILE_RING_RECORDS);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 0);
    counter_nmi_at(&ctx);
    tick_until_the_counter_is_found_stopped(&ctx);
    assert_int_equal(profile_ring_count(&run.rings[0]), PROFILE_RING_RECORDS);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 2);
}

static void test_inactive_takes_nothing(void **state)
{
    (void)state;
    /* The counter overflows just before the stop, and its NMI is taken only after it (held: the CPU was in
     * another NMI): the stop's tick disarms the counter, the NMI is still the counter's to claim, and records
     * nothing. */
    struct context ctx = start_on_the_counter_at_a_shallow_stack(0);
    fake.hold_nmis = true;
    fake_advance(pmu_period_cycles());
    profiler_stop(&run);
    assert_false(pmu_armed_this_cpu());
    profiler_tick(&ctx);
    nmi_ctx = ctx;
    unsigned claimed = fake.nmis_mine;
    fake_release_nmis();
    assert_int_equal(fake.nmis_mine, claimed + 1);
    assert_int_equal(profile_ring_count(&run.rings[0]), 0);
    assert_int_equal(profile_ring_drops(&run.rings[0]), 0);
    profiler_release();
    running = false;
    /* Released as well: still nothing. */
    profiler_tick(&ctx);
    assert_int_equal(profile_ring_count(&run.rings[0]), 0);
}

static void test_records_carry_their_run(void **state)
{
    (void)state;
    struct context ctx = start_at_a_shallow_stack(0);
    profiler_tick(&ctx);
    uint32_t first = run.run;
    assert_int_equal(profile_ring_peek(&run.rings[0])->run, first);
    stop_and_release();
    start();
    profiler_tick(&ctx);
    assert_int_equal(profile_ring_peek(&run.rings[0])->run, first + 1);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_start_without_memory_gives_the_claim_back, test_second_start_is_busy,
               test_rings_allocated_once_and_kept, test_run_numbers_are_distinct_and_never_zero,
               test_window_is_measured, test_start_empties_the_rings, test_record_of_a_deep_chain, test_short_chain,
               test_sample_on_first_instruction_keeps_direct_caller, test_sample_on_ret_keeps_direct_caller,
               test_sample_on_mov_rsp_rbp_keeps_direct_caller, test_sample_and_tick_write_the_same_record,
               test_corrupt_frame_pointer_still_gives_frame_zero, test_no_current_task,
               test_each_cpu_writes_its_own_ring, test_cpu_without_a_ring_takes_nothing, test_full_ring_counts_drops,
               test_inactive_takes_nothing, test_records_carry_their_run, test_counter_run_states_the_counters_period)
