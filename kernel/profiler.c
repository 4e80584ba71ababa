/* kernel/profiler.c: the profiler's sample path (tick, NMI, ring writes) and the start and stop of a run. It
 * owns the per-CPU record rings, the active word (the run number, and whether the run is stopping), the claim
 * that lets one profile run at a time, and each CPU's account of the run (struct profiler_cpu_run: where its
 * samples came from, its counter's health, its NMI time, how long its tick was held off). The sample path runs
 * in the timer interrupt (or, with the PMU, an NMI) of the CPU whose ring it writes: no lock, no allocation, no
 * symbol lookup, no printing -- a frame-pointer walk into a preallocated slot. profiler_start, profiler_stop
 * and profiler_release stay here beside it because they write the statics it reads (the active word, the
 * rings, the began/let_go stop handshake); only a session (kernel/profiler/session.c) calls them. The ring is
 * inline in kernel/profiler_ring.h; the drain and the drop count are kernel/profiler/run.c, the boot options
 * kernel/profiler/options.c, a tick's lateness and weight kernel/profiler/tick_lateness.c.
 *
 * The handshake with the counter, all on each CPU's own tick: on the first tick of a run a CPU arms its
 * counter (or, if that faults, stays on the tick); while armed its tick does not sample, but checks that
 * overflows still arrive and that their NMIs stay within PROFILE_NMI_BUDGET_PERCENT of the cycles between two
 * overflows; when the run stops, the word says "stopping", the stop asks every CPU that began the run to let go
 * (an interrupt to it, cpu_send_profiler_stop) and waits until each has -- on that request or its next tick,
 * whichever comes first -- and the overflows in between are dropped. A CPU that cannot answer in time (a
 * descheduled vCPU, one the debugger holds) disarms when it takes the request or when its counter's next NMI
 * finds the run over, and records nothing for it. Every disarm is on the CPU that owns the counter.
 * What a tick costs is kernel/profiler.h's to say. */
#include "kernel/profiler.h"
#include "kernel/profiler/tick_lateness.h"
#include "kernel/profiler/wall.h"

#include "hal/pmu.h"
#include "kernel/lib/format.h"

#include "hal/compiler.h"
#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

/* ---- state ------------------------------------------------------------------------------------------ */

/* The nominal time between two samples on one CPU in the last run started, as the raw header states it: kept
 * so a debugger reading a stopped machine (scripts/prof.py) takes the figure from here, not from a copy of
 * how it is computed. Volatile: nothing in the kernel reads it back, and the store must not be optimised away. */
static volatile uint64_t last_period_ns;

/* The active word: 0 when no run is active, else the run's number, with RUN_STOPPING set from profiler_stop
 * until every CPU has let go of the run. One word, so one atomic read tells an interrupt whether to sample
 * and which run the sample belongs to. Written only by the claim holder. */
#define RUN_STOPPING 0x80000000u
#define RUN_NUMBER 0x7fffffffu
static _Atomic uint32_t active_word;
/* The claim: 1 while a profile runs, from start until its report has been printed. */
static atomic_int busy;
/* Owned by the claim holder. */
static uint32_t last_run;
static bool counter_run;      /* the run samples on the counter where a CPU can arm it */
static char tick_reason[128]; /* why the tick, when it is the source */
static int64_t run_start_ns;
/* Rings are allocated on the first start (and for a CPU that came online since, on the next) and never freed:
 * a CPU can be inside a sample, past its check of the active word, when another CPU stops the run; freeing
 * its ring then would be a use-after-free. */
static struct profile_ring rings[MAX_CPUS];
static unsigned rings_ready;
/* Where stack_trace_from may read instruction bytes: the kernel's text, copied at the first start so the
 * sample path reads two words instead of calling out for them, and never written again (a straggler of an
 * earlier run may be reading it). Published by the release store of the active word. */
static struct text_bounds kernel_text;

/* Each CPU's account of the current (or last) run, written only by that CPU. began[] and let_go[] are the
 * stop handshake: the run a CPU last began, and the last run it let go of (disarmed, no more samples). */
static struct profiler_cpu_run cpu_runs[MAX_CPUS];
static _Atomic uint32_t began[MAX_CPUS];
static _Atomic uint32_t let_go[MAX_CPUS];
/* Set at start for the ticks of the run: the tick's period, and how many busy ticks in a row without an
 * overflow mean a stopped counter (enough to span several counter periods, and never fewer than two). */
static int64_t tick_period_ns;
static uint32_t silent_ticks_limit;
/* Each CPU's idle time at the start (sched_cpu_idle_ns), and its busy time in the window once stopped. */
static uint64_t idle_at_start[MAX_CPUS];
static uint64_t busy_in_window[MAX_CPUS];
/* A wall run (profile_run.wall): each CPU sweeps its tasks every wall_weight ns (PROFILE_WALL_PERIOD_MS). */
static bool wall_run;
static uint32_t wall_weight;
/* What one tick sample weighs (its record's period) in the run's unit: the tick's period in nanoseconds on a
 * tick run, in TSC cycles on a counter run (a CPU whose counter faulted or stopped), so one run has one unit. */
static uint32_t tick_weight;
/* The counter's nominal period: a CPU's silent_ticks_limit scales with its own period over this one. */
static uint64_t nominal_period_cycles;

/* The label pool's readers (kernel/labels.h): per CPU, one word for the tick's samples and one for the NMI's
 * (neither nests in itself, so each has one writer at a time), odd from just before the sample loads its
 * task's label pointer until its record is committed. The pool waits for an odd word to change before it
 * frees a set a sample may be holding, then for the consumer to drain past the records written by then. */
enum { SAMPLER_TICK, SAMPLER_NMI, SAMPLERS };
static _Atomic uint32_t label_sampling[MAX_CPUS][SAMPLERS];
_Static_assert(MAX_CPUS * SAMPLERS <= LABEL_READER_MARKS && MAX_CPUS + 1 <= LABEL_READER_MARKS,
               "the pool keeps a mark per sampler, and one per ring and their count");

/* ---- the sample path -------------------------------------------------------------------------------- */

/* One sample of ctx, taken at now, weighing period, into this CPU's ring, by sampler (SAMPLER_TICK or
 * SAMPLER_NMI). Inlined into the NMI path; the tick reaches it out of line. */
static inline __attribute__((always_inline)) void record_sample_at(const struct context *ctx, uint32_t run,
                                                                    unsigned cpu, uint8_t flags,
                                                                    uint32_t held_off_us, unsigned sampler,
                                                                    uint32_t period, int64_t now)
{
    struct profile_ring *ring = &rings[cpu];
    struct profile_record *rec = profile_ring_reserve(ring);
    if (!rec)
        return;
    /* Odd: this sample may hold a label set until its record is committed. The fence orders the mark before
     * the load of the task's pointer (a store then a load: only a full fence does), which is what lets the
     * pool conclude, from an even word, that no sample of this CPU holds a set it retired before it looked. */
    _Atomic uint32_t *sampling = &label_sampling[cpu][sampler];
    uint32_t mark = atomic_load_explicit(sampling, memory_order_relaxed) + 1;
    atomic_store_explicit(sampling, mark, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);

    /* Each field is written once, as soon as it is known, so little has to stay live across the calls. */
    rec->run = run;
    rec->cpu = (uint16_t)cpu;
    rec->flags = flags;
    rec->held_off_us = held_off_us;
    rec->period = period;
    rec->time_ns = now;
    const struct task *task = task_current();
    if (task) {
        profile_record_task(rec, task);
        struct stack_bounds stack = task_stack_bounds(task);
        /* Straight into the slot: frame 0 is the interrupted instruction itself, the rest the frame chain. */
        rec->nframes = (uint8_t)stack_trace_from(context_pc(ctx), context_sp(ctx), context_fp(ctx), &stack,
                                                 &kernel_text, rec->frames, PROFILE_MAX_FRAMES);
    } else {
        /* No task, no stack to walk: the interrupted instruction is the whole chain. */
        rec->pid = 0;
        rec->labels = 0;
        rec->labels_generation = 0;
        rec->span = 0;
        rec->frames[0] = context_pc(ctx);
        rec->nframes = 1;
    }
    profile_ring_commit(ring);
    /* release: the commit is visible before the pool can see this sample has left */
    atomic_store_explicit(sampling, mark + 1, memory_order_release);
}

/* The same, taken now. */
static inline __attribute__((always_inline)) void record_sample(const struct context *ctx, uint32_t run,
                                                                 unsigned cpu, uint8_t flags,
                                                                 uint32_t held_off_us, unsigned sampler,
                                                                 uint32_t period)
{
    record_sample_at(ctx, run, cpu, flags, held_off_us, sampler, period, time_ns());
}

/* What the counter's NMI knows of the code it interrupted, which the tick never can: interrupts off there,
 * or an interrupt handler. */
static inline uint8_t interrupted_flags(const struct context *ctx)
{
    uint8_t flags = 0;
    if (!context_irqs_enabled(ctx))
        flags |= PROFILE_REC_IRQS_OFF;
    if (context_in_interrupt(ctx))
        flags |= PROFILE_REC_IN_IRQ;
    return flags;
}

/* This CPU lets go of run: its counter disarmed (and its LVT entry masked) if it is still armed, then the stop
 * told. From its tick, the stop's request, or an NMI that found the run over. */
static NMI_TEXT void let_go_here(unsigned cpu, uint32_t run)
{
    if (pmu_armed_this_cpu())
        pmu_disarm_this_cpu();
    atomic_store_explicit(&let_go[cpu], run, memory_order_release);
}

NMI_TEXT bool profiler_nmi(const struct context *ctx, uint64_t entry_cycles)
{
    if (!pmu_nmi_is_mine())
        return false;
    /* acquire: pairs with the release in profiler_start, so the ring and kernel_text are visible */
    uint32_t word = atomic_load_explicit(&active_word, memory_order_acquire);
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return true;
    struct profiler_cpu_run *c = &cpu_runs[cpu];
    /* The counter's overflow for a run that is over -- stopping, stopped, or an earlier one this CPU has not let
     * go of (its tick and the stop's request have not come: a descheduled vCPU, a CPU the debugger held): it
     * disarms here, on its own CPU, and nothing is recorded. */
    if (!word || (word & RUN_STOPPING) || c->run != word) {
        let_go_here(cpu, word ? word & RUN_NUMBER : c->run);
        return true;
    }
    /* The counter's only while it is this CPU's source: a late overflow after the tick found the counter stopped
     * (or one between arming and the source being set) records nothing, so it never takes the ring slot a tick
     * sample it interrupted is filling. */
    if (c->source != PROFILER_CPU_COUNTER)
        return true;
    /* This overflow ends a period of the length the counter was counting; a throttle takes effect from the
     * overflow after the one it follows (pmu_throttle_this_cpu), so the new period is the next one's. */
    uint64_t period = c->counting_period;
    c->counting_period = c->period_cycles;
    record_sample(ctx, word, cpu, interrupted_flags(ctx), 0, SAMPLER_NMI,
                  period > UINT32_MAX ? UINT32_MAX : (uint32_t)period);
    c->nmis++;
    c->nmi_cycles += cycles() - entry_cycles;
    return true;
}

/* ---- the tick during a run ---------------------------------------------------------------------------- */

/* The first tick of a run on this CPU: a fresh account, and the counter armed if the run is on it. Returns
 * whether this tick should still sample (it should not once the counter is armed). */
static bool begin_on_this_cpu(struct profiler_cpu_run *c, unsigned cpu, uint32_t run)
{
    /* Still armed for an earlier run (its stop could not reach this CPU): that run is let go of first. */
    if (pmu_armed_this_cpu())
        pmu_disarm_this_cpu();
    __builtin_memset(c, 0, sizeof *c);
    c->run = run;
    c->idle_waits_at_tick = sched_idle_waits();
    /* Sequentially consistent with the stop's store of the active word and its load of began[]: either the
     * stop sees this CPU began the run (and asks it to let go), or the check below sees the stop. */
    atomic_store_explicit(&began[cpu], run, memory_order_seq_cst);
    bool tick_samples = true;
    if (!counter_run) {
        c->source = PROFILER_CPU_TICK;
    } else if (pmu_arm_this_cpu()) {
        c->source = PROFILER_CPU_COUNTER;
        c->period_cycles = c->counting_period = pmu_period_cycles();
        c->silent_ticks_limit = silent_ticks_limit;
        tick_samples = false;
    } else {
        c->source = PROFILER_CPU_TICK_ARM_FAULT; /* named in the report; this CPU is not tried again */
    }
    /* This tick read the active word before the stop: if the run stopped meanwhile, the stop may have looked
     * for this CPU before it began, and waits for nothing of it. It lets go now (disarming what it armed) and
     * samples nothing: a record committed after the stop's last drain would be read by no one. */
    if (atomic_load_explicit(&active_word, memory_order_seq_cst) != run) {
        let_go_here(cpu, run);
        return false;
    }
    return tick_samples;
}

/* A host that takes a CPU away can leave two tick intervals in a row without a busy cycle counted: the one it
 * was taken in, and the one its late tick starts (ticks coalesce while it is away, so there is no third).
 * The watch below cannot tell such a tick from a punctual one without reading a clock, so a silence must last
 * silent_ticks_limit busy ticks beyond those two before the counter is called stopped. */
#define SILENT_TICKS_A_HOST_CAN_TAKE 2

/* An armed CPU's NMIs against their budget, from its own counters alone: the cycles its NMIs took since the
 * last check, over the counter periods they came in (each NMI is one period of unhalted cycles, so this is the
 * share of its busy time the counter's NMI takes, as Linux's perf_cpu_time_max_percent reckons it). The NMI
 * adds to nmis and nmi_cycles and this tick only reads them: an NMI landing between the two reads is counted
 * in one check's cycles and the next one's number, never lost. Over budget, the period doubles. */
static void check_nmi_budget(struct profiler_cpu_run *c, uint32_t nmis)
{
    uint32_t taken = nmis - c->budget_nmis;
    if (taken == 0)
        return;
    uint64_t spent = c->nmi_cycles - c->budget_cycles;
    c->budget_nmis = nmis;
    c->budget_cycles += spent;
    if (spent * 100 > (uint64_t)taken * c->period_cycles * PROFILE_NMI_BUDGET_PERCENT) {
        c->period_cycles = pmu_throttle_this_cpu();
        c->throttled = true;
        /* A longer period means fewer overflows: the silence that means "stopped" lengthens with it (the
         * period only ever doubles, so the ratio is a whole number). */
        uint64_t ratio = nominal_period_cycles ? c->period_cycles / nominal_period_cycles : 1;
        c->silent_ticks_limit = (uint32_t)(silent_ticks_limit * (ratio ? ratio : 1));
    }
}

/* An armed CPU's tick: is the counter still interrupting, and is its NMI within budget? Per-CPU counters only:
 * no clock and no register is read unless the counter is found stopped or over budget. Returns whether this
 * tick should sample, which it does from the moment the counter is found stopped. */
static bool watch_counter(struct profiler_cpu_run *c)
{
    uint32_t nmis = c->nmis;
    uint64_t waits = sched_idle_waits();
    const struct task *task = task_current();
    bool busy_since = waits == c->idle_waits_at_tick && task && !task->is_idle;
    /* Unhalted cycles: an idle CPU's counter rightly stays quiet. Only busy ticks in a row without an overflow
     * are evidence, and more of them than a host taking the CPU away can fake. */
    if (nmis != c->nmis_at_tick || !busy_since)
        c->silent_ticks = 0;
    else if (++c->silent_ticks >= c->silent_ticks_limit + SILENT_TICKS_A_HOST_CAN_TAKE) {
        pmu_snapshot_this_cpu(&c->stopped_msrs);
        pmu_disarm_this_cpu();
        c->source = PROFILER_CPU_TICK_STOPPED;
        /* The source before this tick's sample: a late overflow's NMI, from here on, records nothing. */
        atomic_signal_fence(memory_order_seq_cst);
        c->stopped_ns = time_ns() - run_start_ns;
        return true;
    }
    c->nmis_at_tick = nmis;
    c->idle_waits_at_tick = waits;
    check_nmi_budget(c, nmis);
    return false;
}

static __attribute__((noinline)) void tick_in_run(const struct context *ctx, uint32_t word)
{
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return;
    struct profiler_cpu_run *c = &cpu_runs[cpu];
    uint32_t run = word & RUN_NUMBER;
    if (word & RUN_STOPPING) {
        /* Let go of the run: the counter is disarmed here, on its own CPU, and only then does the stop
         * proceed, so nothing is left armed behind a run that is over. */
        let_go_here(cpu, run);
        return;
    }

    bool first = c->run != run;
    if (first && !begin_on_this_cpu(c, cpu, run)) {
        c->ticks = 1;
        return;
    }
    c->ticks++;
    if (wall_run) {
        /* The sweep keeps its period in time, not in ticks: a host that takes the CPU away, or a tick let in
         * late, makes the next sweep stand for the longer time that passed, so no time goes unaccounted. A tick
         * due at the period's end may come up to half a tick early. */
        int64_t now = time_ns();
        if (first)
            c->last_due_ns = now - (int64_t)wall_weight; /* the first sweep stands for one period */
        int64_t since = now - c->last_due_ns;
        if (since >= (int64_t)wall_weight - tick_period_ns / 2 &&
            profiler_wall_sweep(&(struct profiler_wall_target){ &rings[cpu], &label_sampling[cpu][SAMPLER_TICK],
                                                                &kernel_text },
                                ctx, run, cpu, now, since > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)since))
            c->last_due_ns = now;
        return;
    }
    /* The first sampling tick of this CPU starts its schedule, and so does the tick that finds its counter
     * stopped; nothing before it says when a tick was due. */
    bool starts_schedule = first;
    if (c->source == PROFILER_CPU_COUNTER) {
        if (!watch_counter(c))
            return;
        starts_schedule = true;
    }
    int64_t now = time_ns(); /* the sample's time, and the measure of its lateness */
    int64_t held = 0;
    if (starts_schedule)
        c->last_due_ns = now;
    else
        held = tick_held_since_due(c, now, tick_period_ns);
    struct tick_lateness late = { 0, 0, tick_weight };
    if (held > tick_period_ns / 2)
        late = tick_late(c, ctx, held, &(const struct tick_schedule){ tick_period_ns, tick_weight, &kernel_text });
    record_sample_at(ctx, run, cpu, late.flags, late.held_off_us, SAMPLER_TICK, late.weight, now);
}

void profiler_tick(const struct context *ctx)
{
    uint32_t word = atomic_load_explicit(&active_word, memory_order_acquire);
    if (word)
        tick_in_run(ctx, word);
}

/* ---- the label pool's readers (task context, under the pool's lock) ---------------------------------- */

static void samplers_mark(uint32_t *marks)
{
    for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
        for (unsigned s = 0; s < SAMPLERS; s++)
            marks[cpu * SAMPLERS + s] = atomic_load_explicit(&label_sampling[cpu][s], memory_order_seq_cst);
}

/* Every sampler that was inside a sample at the mark (odd) has left it (its word moved on). */
static bool samplers_passed(const uint32_t *marks)
{
    for (unsigned i = 0; i < MAX_CPUS * SAMPLERS; i++)
        if ((marks[i] & 1) && atomic_load_explicit(&label_sampling[i / SAMPLERS][i % SAMPLERS],
                                                   memory_order_acquire) == marks[i])
            return false;
    return true;
}

/* Where each ring's committed records end now; marks[MAX_CPUS] is how many rings there are. A ring allocated
 * later holds nothing a retired set's samplers wrote. */
static void records_mark(uint32_t *marks)
{
    unsigned n = __atomic_load_n(&rings_ready, __ATOMIC_ACQUIRE);
    for (unsigned cpu = 0; cpu < n; cpu++)
        marks[cpu] = atomic_load_explicit(&rings[cpu].head, memory_order_acquire);
    marks[MAX_CPUS] = n;
}

/* Copies of records taken out of the rings and not yet folded (profiler_copies_hold): they hold label set
 * pointers as the rings do. */
static _Atomic unsigned copies_held;

void profiler_copies_hold(void) { atomic_fetch_add_explicit(&copies_held, 1, memory_order_acq_rel); }
void profiler_copies_release(void) { atomic_fetch_sub_explicit(&copies_held, 1, memory_order_acq_rel); }

/* The consumer has taken every record below each mark out of its ring (a reset at a start counts: it
 * discards them unread), and no copy of one is waiting to be folded. Signed: the indexes run freely and wrap.
 * With the profiler unclaimed there is no consumer: what the rings still hold (a record committed after its
 * run's last drain, by a CPU the stop could not wait for) is never drained, the next start discards it unread,
 * and a debugger that reads it checks its set's generation (struct profile_record). So it holds nothing up:
 * the pool would otherwise wait on that ring until the next profile. */
static bool records_passed(const uint32_t *marks)
{
    if (atomic_load_explicit(&copies_held, memory_order_acquire))
        return false;
    if (!atomic_load_explicit(&busy, memory_order_acquire))
        return true;
    for (unsigned cpu = 0; cpu < marks[MAX_CPUS]; cpu++)
        if ((int32_t)(atomic_load_explicit(&rings[cpu].tail, memory_order_acquire) - marks[cpu]) < 0)
            return false;
    return true;
}

static const struct label_readers profiler_label_readers = {
    samplers_mark, samplers_passed, records_mark, records_passed,
};

/* ---- run control (task context) --------------------------------------------------------------------- */

static bool allocate_rings(void)
{
    unsigned online = cpu_count();
    if (online > MAX_CPUS)
        online = MAX_CPUS;
    while (rings_ready < online) {
        uint32_t records = profiler_ring_records();
        struct profile_record *storage = kmalloc(sizeof(struct profile_record) * records);
        if (!storage)
            return false;
        profile_ring_init(&rings[rings_ready], storage, records, 0);
        /* release: the pool's records_mark reads the ring only once it counts it */
        __atomic_store_n(&rings_ready, rings_ready + 1, __ATOMIC_RELEASE);
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
    /* From the first run on, a retired label set waits for the samplers and the rings (kernel/labels.h). */
    label_set_readers(&profiler_label_readers);
    for (unsigned i = 0; i < rings_ready; i++)
        profile_ring_reset(&rings[i]);

    if (kernel_text.hi == 0) {
        const struct symtab *tab = kernel_symtab();
        kernel_text.lo = (uintptr_t)tab->text_start;
        kernel_text.hi = (uintptr_t)tab->text_end;
    }
    unsigned hz = tick_hz();
    tick_period_ns = 1000000000 / (hz ? hz : TICK_HZ_DEFAULT);
    uint64_t per_ms = cycles_per_ms();

    /* Asks once whether there is a PMU that counts (the first time, the probe runs here, on this CPU). A wall
     * run is the tick's: it samples tasks at a fixed wall-clock period, not cycles. */
    bool counts = pmu_probe() == PMU_COUNTS;
    counter_run = counts && !run->wall;
    wall_run = run->wall;
    run->tick_hz = hz;
    if (counter_run) {
        run->source = run->source_name = pmu_source_name();
        run->tick_reason = 0;
        run->period_cycles = pmu_period_cycles();
        run->period_ns = per_ms ? run->period_cycles * 1000000 / per_ms : 1000000;
        /* Busy ticks without an overflow that mean a stopped counter: at least four of its periods. */
        uint64_t span = 4 * run->period_ns;
        silent_ticks_limit = (uint32_t)((span + (uint64_t)tick_period_ns - 1) / (uint64_t)tick_period_ns);
        if (silent_ticks_limit < 2)
            silent_ticks_limit = 2;
        nominal_period_cycles = run->period_cycles;
        uint64_t tick_cycles = (uint64_t)tick_period_ns * per_ms / 1000000;
        tick_weight = tick_cycles > UINT32_MAX ? UINT32_MAX : (uint32_t)tick_cycles;
    } else {
        if (run->wall)
            ksnprintf(tick_reason, sizeof tick_reason, "a wall profile sweeps every task on the tick");
        else
            ksnprintf(tick_reason, sizeof tick_reason, "%s", pmu_verdict_reason());
        run->source = run->source_name = "tick";
        run->tick_reason = tick_reason;
        run->period_cycles = 0;
        run->period_ns = (uint64_t)tick_period_ns;
        tick_weight = (uint32_t)tick_period_ns;
    }
    wall_weight = PROFILE_WALL_PERIOD_MS * 1000000u;
    run->wall_period_ns = run->wall ? wall_weight : 0;

    /* 0 means "inactive", and the top bit is the stopping flag, so the number skips both when it wraps. */
    last_run = (last_run & RUN_NUMBER) == RUN_NUMBER ? 1 : last_run + 1;

    run->rings = rings;
    run->ncpus = rings_ready;
    run->run = last_run;
    run->cpu = cpu_runs;
    last_period_ns = run->period_ns;
    run->window_ms = 0;
    run->busy_ns = 0;
    for (unsigned cpu = 0; cpu < rings_ready; cpu++)
        idle_at_start[cpu] = sched_cpu_idle_ns(cpu);
    run->start_ns = run_start_ns = time_ns();
    atomic_store_explicit(&active_word, last_run, memory_order_release);
    return PROFILER_OK;
}

void profiler_stop_request(void)
{
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return;
    uint32_t word = atomic_load_explicit(&active_word, memory_order_acquire);
    if (word & RUN_STOPPING)
        let_go_here(cpu, word & RUN_NUMBER);
    else if (cpu_runs[cpu].run != word && pmu_armed_this_cpu())
        pmu_disarm_this_cpu(); /* the stop gave up waiting: the run is over, or this CPU has not begun the next */
}

/* Every CPU that began the run and has not let go of it is asked to, now, on itself (its tick may be a period
 * away, or held off). */
static void ask_cpus_to_let_go(uint32_t run)
{
    for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
        if (atomic_load_explicit(&began[cpu], memory_order_seq_cst) == run &&
            atomic_load_explicit(&let_go[cpu], memory_order_acquire) != run)
            cpu_send_profiler_stop(cpu);
}

/* Until every CPU that began the run has let go of it (on the stop's request, or its own tick), at most a few
 * tick periods; a CPU that cannot answer within the bound (a descheduled vCPU, one the debugger holds) lets go
 * when it takes the request or its next NMI, whichever comes first, and records nothing more for the run. */
static void wait_for_cpus_to_let_go(uint32_t run)
{
    int64_t deadline = time_ns() + 8 * tick_period_ns + 20000000;
    for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
        if (atomic_load_explicit(&began[cpu], memory_order_acquire) != run)
            continue;
        while (atomic_load_explicit(&let_go[cpu], memory_order_acquire) != run && time_ns() - deadline < 0)
            task_sleep_ms(1);
    }
}

void profiler_stop(struct profile_run *run)
{
    /* Sequentially consistent: see begin_on_this_cpu. */
    atomic_store_explicit(&active_word, run->run | RUN_STOPPING, memory_order_seq_cst);
    int64_t elapsed = time_ns() - run->start_ns; /* signed: one clock, compared as a difference */
    if (elapsed < 0)
        elapsed = 0;
    run->window_ms = (uint32_t)((elapsed + 500000) / 1000000);
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        uint64_t idle = sched_cpu_idle_ns(cpu) - idle_at_start[cpu];
        busy_in_window[cpu] = idle < (uint64_t)elapsed ? (uint64_t)elapsed - idle : 0;
    }
    run->busy_ns = busy_in_window;
    ask_cpus_to_let_go(run->run);
    wait_for_cpus_to_let_go(run->run);
    atomic_store_explicit(&active_word, 0, memory_order_release);
}

void profiler_release(void)
{
    atomic_store_explicit(&busy, 0, memory_order_release);
}
