/* kernel/profiler.c: the profiler's run control and its sample path. It owns the per-CPU record rings, the
 * active word (which is also the run number) and the claim that lets one profile run at a time. The sample
 * path runs in the timer interrupt (or, with the PMU, an NMI) of the CPU whose ring it writes: no lock, no
 * allocation, no symbol lookup, no printing -- a frame-pointer walk into a preallocated slot. The ring itself
 * is inline in kernel/profiler_ring.h; folding and printing are kernel/profiler_report.c. */
#include "kernel/profiler.h"

#include "hal/pmu.h"
#include "kernel/format.h"

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

/* ---- state ------------------------------------------------------------------------------------------ */

/* Where samples come from: the tick, or the performance counter (hal/pmu.h) when a run starts on a machine
 * whose counter proved it counts and interrupts. The report prints the name, and for the tick the reason the
 * counter was not used, because reading the numbers depends on it. */
struct sample_source {
    const char *name;
};
static const struct sample_source tick_source = { .name = "tick" };
static struct sample_source pmu_source;
static char tick_with_reason[160];
/* The nominal time between two samples on one CPU in the last run started, as the raw header states it: kept
 * so a debugger reading a stopped machine (scripts/prof.py) takes the figure from here, not from a copy of
 * how it is computed. Volatile: nothing in the kernel reads it back, and the store must not be optimised away. */
static volatile uint64_t last_period_ns;

/* The run being recorded, or 0. One word, so one atomic read tells an interrupt both whether to sample and
 * which run the sample belongs to. Written only by the claim holder. */
static _Atomic uint32_t active_run;
/* The claim: 1 while a profile runs, from start until its report has been printed. */
static atomic_int busy;
/* Owned by the claim holder. */
static uint32_t last_run;
static const struct sample_source *source = &tick_source;
/* Rings are allocated on the first start (and for a CPU that came online since, on the next) and never freed: a CPU can be inside a sample, past its check of
 * active_run, when another CPU stops the run; freeing its ring then would be a use-after-free. */
static struct profile_ring rings[MAX_CPUS];
static unsigned rings_ready;
/* Where stack_trace_from may read instruction bytes: the kernel's text, copied at the first start so the
 * sample path reads two words instead of calling out for them, and never written again (a straggler of an
 * earlier run may be reading it). Published by the release store of active_run. */
static struct text_bounds kernel_text;

/* ---- the sample path -------------------------------------------------------------------------------- */

/* One sample of ctx into this CPU's ring. Inlined straight into profiler_sample: that is the counter's NMI,
 * armed only while a run is, so its idle path (correct either way) is not worth a call to protect.
 * profiler_tick runs on every tick, mostly with no run, and reaches it through take_sample below. */
static inline __attribute__((always_inline)) void record_sample(const struct context *ctx, uint32_t run)
{
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return;
    struct profile_ring *ring = &rings[cpu];
    struct profile_record *rec = profile_ring_reserve(ring);
    if (!rec)
        return;

    /* Each field is written once, as soon as it is known, so little has to stay live across the calls. */
    rec->run = run;
    rec->cpu = (uint16_t)cpu;
    rec->time_ns = time_ns();
    const struct task *task = task_current();
    if (task) {
        rec->pid = task->pid;
        /* acquire: the set a label swap published is complete before anyone follows this pointer */
        rec->labels = atomic_load_explicit(&task->labels, memory_order_acquire);
        struct stack_bounds stack = task_stack_bounds(task);
        /* Straight into the slot: frame 0 is the interrupted instruction itself, the rest the frame chain. */
        rec->nframes = (uint16_t)stack_trace_from(context_pc(ctx), context_sp(ctx), context_fp(ctx), &stack,
                                                  &kernel_text, rec->frames, PROFILE_MAX_FRAMES);
    } else {
        /* No task, no stack to walk: the interrupted instruction is the whole chain. */
        rec->pid = 0;
        rec->labels = 0;
        rec->frames[0] = context_pc(ctx);
        rec->nframes = 1;
    }
    profile_ring_commit(ring);
}

/* Out of line on purpose: the check in front of it then costs a tick three instructions when no run is
 * active, instead of sharing this function's register saves. */
static __attribute__((noinline)) void take_sample(const struct context *ctx, uint32_t run)
{
    record_sample(ctx, run);
}

void profiler_sample(const struct context *ctx)
{
    /* acquire: pairs with the release in profiler_start, so the ring and kernel_text are visible */
    uint32_t run = atomic_load_explicit(&active_run, memory_order_acquire);
    if (run)
        record_sample(ctx, run);
}

void profiler_tick(const struct context *ctx)
{
    uint32_t run = atomic_load_explicit(&active_run, memory_order_acquire);
    if (!run) {
        /* Stopped: a CPU still armed disarms its own counter, on its own tick; until then its overflows
         * kept coming and profiler_sample dropped them. Only a counter run can have left one armed, so an idle
         * tick after a tick run costs the one atomic read and a compare, no call. */
        if (source == &pmu_source && pmu_armed_this_cpu())
            pmu_disarm_this_cpu();
        return;
    }
    /* With the counter as the source each CPU arms its own on its next tick (its control registers can be
     * written from nowhere else), and an armed CPU's tick does not sample, so nothing is counted twice. A CPU
     * whose arming faulted stays on the tick. */
    if (source == &pmu_source && (pmu_armed_this_cpu() || pmu_arm_this_cpu()))
        return;
    take_sample(ctx, run);
}

/* ---- run control (task context) --------------------------------------------------------------------- */

static bool allocate_rings(void)
{
    unsigned online = cpu_count();
    if (online > MAX_CPUS)
        online = MAX_CPUS;
    while (rings_ready < online) {
        struct profile_record *storage = kmalloc(sizeof(struct profile_record) * PROFILE_RING_RECORDS);
        if (!storage)
            return false;
        profile_ring_init(&rings[rings_ready], storage, PROFILE_RING_RECORDS, 0);
        rings_ready++;
    }
    return true;
}

int profiler_start(struct profile_run *run)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&busy, &expected, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return PROFILER_BUSY;
    if (!allocate_rings()) {
        profiler_release();
        return PROFILER_NO_MEMORY;
    }
    for (unsigned i = 0; i < rings_ready; i++)
        profile_ring_reset(&rings[i]);

    if (kernel_text.hi == 0) {
        const struct symtab *tab = kernel_symtab();
        kernel_text.lo = (uintptr_t)tab->text_start;
        kernel_text.hi = (uintptr_t)tab->text_end;
    }
    /* Asks once whether there is a PMU that counts (the first time, the probe runs here, on this CPU). */
    if (pmu_probe() == PMU_COUNTS) {
        pmu_source.name = pmu_source_name();
        source = &pmu_source;
    } else {
        ksnprintf(tick_with_reason, sizeof tick_with_reason, "tick (%s)", pmu_verdict_reason());
        source = &tick_source;
    }
    uint64_t per_ms = cycles_per_ms();

    /* 0 means "inactive", so the run number skips it when it wraps. */
    last_run++;
    if (last_run == 0)
        last_run = 1;

    run->rings = rings;
    run->ncpus = rings_ready;
    run->run = last_run;
    run->source = source == &tick_source ? tick_with_reason : source->name;
    run->source_name = source->name;
    run->period_ns = source == &tick_source ? PROFILE_TICK_PERIOD_NS
                     : per_ms ? pmu_period_cycles() * 1000000 / per_ms : 1000000;
    last_period_ns = run->period_ns;
    run->window_ms = 0;
    run->start_ns = time_ns();
    atomic_store_explicit(&active_run, last_run, memory_order_release);
    return PROFILER_OK;
}

void profiler_stop(struct profile_run *run)
{
    atomic_store_explicit(&active_run, 0, memory_order_release);
    int64_t elapsed = time_ns() - run->start_ns; /* signed: one clock, compared as a difference */
    if (elapsed < 0)
        elapsed = 0;
    run->window_ms = (uint32_t)((elapsed + 500000) / 1000000);
}

void profiler_release(void)
{
    atomic_store_explicit(&busy, 0, memory_order_release);
}
