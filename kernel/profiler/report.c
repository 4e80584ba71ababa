/* kernel/profiler/report.c: the profiler's report -- what the fold (kernel/profiler/fold.h) holds, printed:
 * the header (window, totals, the source and its rate), the per-CPU line and its notes, the label breakdown
 * and the hottest chains. Task context only: this is where callers' return addresses are resolved to symbols,
 * which the sample path may not do. Pure apart from the fold's kmalloc and the sink, so the host tests drive it
 * with synthetic rings and symbols. The raw form of a run is kernel/profiler/raw.c's. It also keeps the last
 * report the console printed, word for word, for the debugger (profile_kept_report: scripts/prof.py reads it). */
#include "kernel/profiler/report.h"

#include "hal/context.h"
#include "hal/cpu.h"
#include "kernel/lib/format.h"
#include "kernel/labels.h"

/* ---- printing ---------------------------------------------------------------------------------------- */

/* part/whole in tenths of a percent, rounded half up, without floating point (the kernel has none). */
void profile_report_print_percent(struct sink *out, uint64_t part, uint64_t whole)
{
    uint64_t tenths = whole ? (part * 1000 + whole / 2) / whole : 0;
    sink_printf(out, "%llu.%llu%%", (unsigned long long)(tenths / 10), (unsigned long long)(tenths % 10));
}

/* A caller is a return address: it is resolved as one (symtab_lookup_return), by the call instruction before
 * it, so a call that ends its function (to one that does not return) is not blamed on the next function. The
 * line is the panic backtrace's, so the two read alike. */
static void print_caller(struct sink *out, const struct symtab *tab, uint64_t addr)
{
    sink_puts(out, "        <- ");
    symbol_print_return(out, tab, addr);
    sink_puts(out, "\n");
}

/* " [irqs off]", " [in irq]", " [in irq, irqs off]", " [let in after 9.8 ms irqs off]": what the chain's
 * samples interrupted, when it was not ordinary code with interrupts on. */
static void print_marks(struct sink *out, const struct profile_chain *c)
{
    if (c->activity == TASK_ACT_WAITING) {
        sink_printf(out, " [waiting %s]", task_wait_name((enum task_wait)c->waiting_on));
        return;
    }
    if (c->activity) {
        sink_printf(out, " [%s]", task_activity_name((enum task_activity)c->activity));
        return;
    }
    if (c->flags & PROFILE_REC_LET_IN) {
        uint64_t avg_us = c->count ? c->held_off_us / c->count : 0;
        sink_printf(out, " [let in after %llu.%llu ms irqs off]", (unsigned long long)(avg_us / 1000),
                    (unsigned long long)(avg_us % 1000 / 100));
    } else if ((c->flags & PROFILE_REC_IN_IRQ) && (c->flags & PROFILE_REC_IRQS_OFF)) {
        sink_puts(out, " [in irq, irqs off]");
    } else if (c->flags & PROFILE_REC_IN_IRQ) {
        sink_puts(out, " [in irq]");
    } else if (c->flags & PROFILE_REC_IRQS_OFF) {
        sink_puts(out, " [irqs off]");
    }
}

static void print_chain(struct sink *out, const struct symtab *tab, const struct profile_chain *c, uint64_t total)
{
    profile_report_print_percent(out, c->weight, total);
    sink_printf(out, " %u ", c->count);
    if (!c->name)
        sink_printf(out, "0x%llx", (unsigned long long)c->leaf);
    else if (c->min_offset == c->max_offset)
        sink_printf(out, "%s+0x%llx", c->name, (unsigned long long)c->min_offset);
    else
        sink_printf(out, "%s+0x%llx..0x%llx", c->name, (unsigned long long)c->min_offset,
                    (unsigned long long)c->max_offset);
    print_marks(out, c);
    sink_puts(out, "\n");
    for (uint32_t i = 0; i < c->ncallers; i++)
        print_caller(out, tab, c->callers[i]);
}

/* Hottest (by weight) first; equal weights keep first-seen order (insertion sort is stable, and the table is
 * small). */
static void sort_hottest(const struct profile_fold *fold, uint8_t *order)
{
    for (uint32_t i = 0; i < fold->used; i++) {
        uint8_t e = (uint8_t)i;
        uint32_t j = i;
        while (j > 0 && fold->chains[order[j - 1]].weight < fold->chains[e].weight) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = e;
    }
}

static void print_chains(struct sink *out, const struct symtab *tab, const struct profile_fold *fold,
                         unsigned max_chains)
{
    uint8_t order[PROFILE_CHAIN_TABLE];
    sort_hottest(fold, order);

    uint32_t shown = fold->used < max_chains ? fold->used : max_chains;
    for (uint32_t i = 0; i < shown; i++)
        print_chain(out, tab, &fold->chains[order[i]], fold->weight);

    if (fold->used > shown) {
        uint64_t rest = 0, rest_weight = 0;
        for (uint32_t i = shown; i < fold->used; i++) {
            rest += fold->chains[order[i]].count;
            rest_weight += fold->chains[order[i]].weight;
        }
        sink_printf(out, "... %u more chains, %llu samples (", fold->used - shown, (unsigned long long)rest);
        profile_report_print_percent(out, rest_weight, fold->weight);
        sink_puts(out, ")\n");
    }
    if (fold->not_tracked)
        sink_printf(out, "more than %u distinct chains: %llu samples in chains not shown\n",
                    (unsigned)PROFILE_CHAIN_TABLE, (unsigned long long)fold->not_tracked);
}

/* "labels: 62.5% (5) cmd=profile, 37.5% (3) (none)": hottest first, equal counts in first-seen order. */
static void print_label_shares(struct sink *out, const struct profile_fold *fold)
{
    uint8_t order[LABEL_TABLE_SETS + 1];
    _Static_assert(LABEL_TABLE_SETS + 1 <= 256, "share indexes are bytes");
    for (uint32_t i = 0; i < fold->nshares; i++) {
        uint32_t j = i;
        while (j > 0 && fold->shares[order[j - 1]].weight < fold->shares[i].weight) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
    char text[LABEL_SET_TEXT_MAX];
    sink_puts(out, "labels: ");
    for (uint32_t i = 0; i < fold->nshares; i++) {
        const struct profile_label_share *share = &fold->shares[order[i]];
        if (i)
            sink_puts(out, ", ");
        profile_report_print_percent(out, share->weight, fold->weight);
        label_set_format(share->set, text, sizeof text);
        sink_printf(out, " (%u) %s", share->count, text);
    }
    sink_puts(out, "\n");
}

/* ---- a wall run's split ---------------------------------------------------------------------------- */

#define WALL_TASK_ROWS 32 /* tasks a wall report lists, in pid order; the rest are counted */

/* "wall: 4 tasks x 2000 ms every 10 ms: 31.0% running, 4.0% runnable, 65.0% waiting (net 40.0%, sleep 25.0%)":
 * every task's time in the window, by what it was doing, the waits by what they waited on, largest first. */
static void print_wall_split(struct sink *out, const struct profile_run *run, const struct profile_fold *fold)
{
    sink_printf(out, "wall: %u tasks x %u ms every %llu ms: ", fold->ntasks, run->window_ms,
                (unsigned long long)(run->wall_period_ns / 1000000));
    for (unsigned act = TASK_ACT_RUNNING; act <= TASK_ACT_WAITING; act++) {
        profile_report_print_percent(out, fold->activity_weight[act], fold->weight);
        sink_printf(out, " %s%s", task_activity_name((enum task_activity)act), act < TASK_ACT_WAITING ? ", " : "");
    }
    bool done[TASK_WAIT_KINDS] = { false };
    bool first = true;
    for (;;) {
        unsigned best = TASK_WAIT_KINDS;
        for (unsigned w = 0; w < TASK_WAIT_KINDS; w++)
            if (!done[w] && fold->waiting_weight[w] &&
                (best == TASK_WAIT_KINDS || fold->waiting_weight[w] > fold->waiting_weight[best]))
                best = w;
        if (best == TASK_WAIT_KINDS)
            break;
        done[best] = true;
        sink_printf(out, "%s%s ", first ? " (" : ", ", task_wait_name((enum task_wait)best));
        profile_report_print_percent(out, fold->waiting_weight[best], fold->weight);
        first = false;
    }
    sink_puts(out, first ? "\n" : ")\n");
}

/* "task 17: 30.5% running, 1.0% runnable, 68.5% waiting": each task's own time by what it was doing, in pid
 * order, at most WALL_TASK_ROWS of them. */
static void print_wall_tasks(struct sink *out, const struct profile_fold *fold)
{
    uint32_t last = 0, shown = 0;
    while (shown < WALL_TASK_ROWS) {
        const struct profile_task_share *next = 0;
        for (uint32_t i = 0; i < PROFILE_FOLD_TASK_SLOTS; i++) {
            const struct profile_task_share *t = &fold->tasks[i];
            if (t->pid > last && (!next || t->pid < next->pid))
                next = t;
        }
        if (!next)
            break;
        uint64_t whole = 0;
        for (unsigned act = TASK_ACT_RUNNING; act <= TASK_ACT_WAITING; act++)
            whole += next->weight[act];
        sink_printf(out, "task %u: ", next->pid);
        for (unsigned act = TASK_ACT_RUNNING; act <= TASK_ACT_WAITING; act++) {
            profile_report_print_percent(out, next->weight[act], whole);
            sink_printf(out, " %s%s", task_activity_name((enum task_activity)act),
                        act < TASK_ACT_WAITING ? ", " : "\n");
        }
        last = next->pid;
        shown++;
    }
    if (fold->ntasks > shown)
        sink_printf(out, "... %u more tasks\n", fold->ntasks - shown);
}

/* ---- the header and the per-CPU truth -------------------------------------------------------------- */

static const char *const cpu_source_words[] = {
    [PROFILER_CPU_ABSENT] = "-", [PROFILER_CPU_TICK] = "tick", [PROFILER_CPU_COUNTER] = "counter",
    [PROFILER_CPU_TICK_ARM_FAULT] = "tick (arm faulted)", [PROFILER_CPU_TICK_STOPPED] = "tick (counter stopped)",
};

static const struct profiler_cpu_run *cpu_account(const struct profile_run *run, unsigned cpu)
{
    if (!run->cpu || run->cpu[cpu].run != run->run)
        return 0;
    return &run->cpu[cpu];
}

/* "source pmu/nmi intel fixed-ctr1 every 2100000 cycles (~1000 Hz)", "source tick at 100 Hz (reason)", or a
 * mixed one naming how many CPUs each source had. `profile top` prints the same line (report.h). */
void profile_report_print_source(struct sink *out, const struct profile_run *run)
{
    unsigned on_counter = 0, on_tick = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        const struct profiler_cpu_run *c = cpu_account(run, cpu);
        if (!c)
            continue;
        if (c->source == PROFILER_CPU_COUNTER)
            on_counter++;
        else if (c->source != PROFILER_CPU_ABSENT)
            on_tick++;
    }
    /* The counter's period is stated in the cycles it counts, never as a rate: it was set from the TSC's rate,
     * but unhalted core cycles run at the core's clock; the rate as measured has its own line. */
    if (!run->tick_reason && on_tick && on_counter) {
        sink_printf(out, "source mixed: %s every %llu cycles on %u cpus, tick at %u Hz on %u\n", run->source,
                    (unsigned long long)run->period_cycles, on_counter, run->tick_hz, on_tick);
    } else if (!run->tick_reason && on_tick) {
        sink_printf(out, "source tick at %u Hz (no cpu kept its counter)\n", run->tick_hz);
    } else if (!run->tick_reason) {
        sink_printf(out, "source %s every %llu cycles\n", run->source, (unsigned long long)run->period_cycles);
    } else {
        sink_printf(out, "source tick at %u Hz (%s)\n", run->tick_hz, run->tick_reason);
    }
}

/* "per cpu: 0:1380 1:1391 2:1370/12 3:345 (throttled: every 8400000 cycles)": samples, drops after a '/'
 * where there were any, and the period of a CPU whose counter was throttled (its samples weigh that much
 * each), wrapped at 100 columns (255 CPUs take about 20 lines); a CPU whose source is not the header's gets it in its own
 * line below. */
static void print_per_cpu(struct sink *out, const struct profile_run *run, const struct profile_fold *fold)
{
    sink_puts(out, "per cpu:");
    unsigned column = 8;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        char item[96];
        uint32_t drops = profile_ring_drops(&run->rings[cpu]);
        size_t n = drops ? ksnprintf(item, sizeof item, " %u:%u/%u", cpu, fold->cpu_samples[cpu], drops)
                         : ksnprintf(item, sizeof item, " %u:%u", cpu, fold->cpu_samples[cpu]);
        const struct profiler_cpu_run *c = cpu_account(run, cpu);
        if (c && c->throttled)
            n += ksnprintf(item + n, sizeof item - n, " (throttled: every %llu cycles)",
                           (unsigned long long)c->period_cycles);
        if (column + n > 100) {
            sink_puts(out, "\n         ");
            column = 8;
        }
        sink_puts(out, item);
        column += (unsigned)n;
    }
    sink_puts(out, "\n");
}

static uint32_t kept_one_in(const struct profile_fold *fold) { return fold->kept_one_in > 1 ? fold->kept_one_in : 1; }

/* "rate per busy second: 0:1002 1:998 2:- 3:1000": on the counter, each CPU's samples per second of its busy
 * time (the window less its idle time: the counter counts unhalted cycles), "-" for a CPU that was not on the
 * counter or never busy; wrapped as the per-CPU line is. */
static void print_rates(struct sink *out, const struct profile_run *run, const struct profile_fold *fold)
{
    if (run->tick_reason || !run->busy_ns)
        return;
    sink_puts(out, "rate per busy second:");
    unsigned column = 21;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        char item[40];
        const struct profiler_cpu_run *c = cpu_account(run, cpu);
        uint64_t busy = run->busy_ns[cpu];
        size_t n = c && c->source == PROFILER_CPU_COUNTER && busy
                       ? ksnprintf(item, sizeof item, " %u:%llu", cpu,
                                   (unsigned long long)(((uint64_t)fold->cpu_samples[cpu] * kept_one_in(fold) *
                                                             1000000000 + busy / 2) / busy))
                       : ksnprintf(item, sizeof item, " %u:-", cpu);
        if (column + n > 100) {
            sink_puts(out, "\n                     ");
            column = 21;
        }
        sink_puts(out, item);
        column += (unsigned)n;
    }
    sink_puts(out, "\n");
}

static void print_ms_share(struct sink *out, uint64_t ns, uint32_t window_ms)
{
    uint64_t ms = ns / 1000000;
    sink_printf(out, "%llu ms", (unsigned long long)ms);
    if (window_ms)
        sink_printf(out, " (%llu%%)", (unsigned long long)(ms * 100 / window_ms));
}

static uint64_t held_off_of(const struct profiler_cpu_run *c) { return c->held_off_ns; }
static uint64_t late_elsewhere_of(const struct profiler_cpu_run *c) { return c->late_elsewhere_ns; }

/* " cpu 2 1911 ms (95%), cpu 3 1896 ms (94%)": each CPU whose figure (ns) is not zero, with its share of the
 * window. */
static void print_cpu_times(struct sink *out, const struct profile_run *run,
                            uint64_t (*figure)(const struct profiler_cpu_run *c))
{
    bool first = true;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        const struct profiler_cpu_run *c = cpu_account(run, cpu);
        if (!c || !figure(c))
            continue;
        sink_printf(out, "%s cpu %u ", first ? "" : ",", cpu);
        print_ms_share(out, figure(c), run->window_ms);
        first = false;
    }
}

static void print_snapshot(struct sink *out, const struct pmu_snapshot *snap)
{
    for (unsigned i = 0; i < snap->count; i++) {
        if (snap->regs[i].faulted)
            sink_printf(out, "%s%s #GP", i ? ", " : "", snap->regs[i].name);
        else
            sink_printf(out, "%s%s 0x%llx", i ? ", " : "", snap->regs[i].name,
                        (unsigned long long)snap->regs[i].value);
    }
    sink_printf(out, "\n        counting %s, pmi %s, enabled %s, frozen %s, lvt %s%s\n",
                snap->counting ? "on" : "off", snap->pmi_enabled ? "on" : "off",
                snap->globally_enabled ? "yes" : "no", snap->frozen ? "yes" : "no",
                snap->lvt_masked ? "masked" : "unmasked", snap->lvt_nmi ? "" : ", not nmi");
}

/* The lines about single CPUs: a source other than the run's, a stopped counter with what its registers
 * showed, throttling, and how long the tick was held off. */
static void print_cpu_notes(struct sink *out, const struct profile_run *run, const struct symtab *tab)
{
    bool counter_run = !run->tick_reason;
    bool on_counter = false, on_tick = false, throttled = false;
    uint64_t held_total = 0, elsewhere_total = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        const struct profiler_cpu_run *c = cpu_account(run, cpu);
        if (!c)
            continue;
        on_counter |= c->source == PROFILER_CPU_COUNTER;
        on_tick |= c->source != PROFILER_CPU_COUNTER && c->source != PROFILER_CPU_ABSENT;
        throttled |= c->throttled;
        if (counter_run && c->source != PROFILER_CPU_COUNTER)
            sink_printf(out, "cpu %u: %s\n", cpu, cpu_source_words[c->source]);
        if (c->source == PROFILER_CPU_TICK_STOPPED) {
            sink_printf(out, "cpu %u: its counter stopped interrupting %llu ms into the run (no overflow in a "
                        "busy stretch); on the tick since. It showed: ", cpu,
                        (unsigned long long)(c->stopped_ns / 1000000));
            print_snapshot(out, &c->stopped_msrs);
        }
        if (c->throttled)
            sink_printf(out, "cpu %u: throttled: its NMIs took over %u%% of the cpu, period doubled to %llu cycles\n",
                        cpu, (unsigned)PROFILE_NMI_BUDGET_PERCENT, (unsigned long long)c->period_cycles);
        held_total += c->held_off_ns;
        elsewhere_total += c->late_elsewhere_ns;
    }
    /* Only the tick can be held off; the counter's NMI lands inside interrupts-off code and marks it. */
    if (held_total) {
        sink_puts(out, "tick held off by interrupts-off code:");
        print_cpu_times(out, run, held_off_of);
        uintptr_t site = 0;
        for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
            const struct profiler_cpu_run *c = cpu_account(run, cpu);
            if (c && c->held_off_ns)
                site = c->let_in_pc;
        }
        struct symbol_hit hit;
        if (site && symtab_lookup(tab, site, &hit))
            sink_printf(out, "; let in at %s+0x%llx (%s)", hit.name, (unsigned long long)hit.offset,
                        irq_enable_before(site) ? irq_enable_before(site) : "?");
        sink_puts(out, "\n");
    }
    /* A late tick elsewhere is not interrupts-off code: the CPU was not running (a host took it away). */
    if (elsewhere_total * 100 > (uint64_t)run->window_ms * 1000000 * run->ncpus * 5) {
        sink_puts(out, "ticks late elsewhere (the cpu was taken away, not held off):");
        print_cpu_times(out, run, late_elsewhere_of);
        sink_puts(out, "\n");
    }
    /* The percentages are of weight, each sample its period: where that is not each chain's share of the
     * samples, the reader is told why rather than left to divide the counts. */
    bool mixed = counter_run && on_counter && on_tick;
    if (mixed || throttled || held_total) {
        sink_puts(out, "percentages are of weight, not of sample counts:");
        const char *sep = " ";
        if (mixed) {
            sink_printf(out, "%sthe counter's samples weigh core cycles, the tick's TSC cycles", sep);
            sep = "; ";
        }
        if (throttled) {
            sink_printf(out, "%sa throttled cpu's samples weigh its longer period", sep);
            sep = "; ";
        }
        if (held_total)
            sink_printf(out, "%sa held-off tick weighs the ticks it stood for", sep);
        sink_puts(out, "\n");
    }
}

int profile_report_print(const struct profile_run *run, const struct profile_fold *fold,
                         const struct profile_filter *filter, unsigned max_chains, const struct symtab *tab,
                         struct sink *out)
{
    unsigned cpus = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++)
        cpus += fold->cpu_samples[cpu] != 0;
    uint64_t dropped = profiler_drops(run);

    sink_printf(out, "profiled %u ms\n", run->window_ms);
    sink_printf(out, "%llu samples on %u cpus, %llu dropped, ", (unsigned long long)fold->samples, cpus,
                (unsigned long long)dropped);
    profile_report_print_source(out, run);
    if (dropped && filter && (filter->by_pid || filter->by_label))
        sink_printf(out, "dropped: the %llu are of every task's samples: a full ring drops before the filter\n",
                    (unsigned long long)dropped);
    if (kept_one_in(fold) > 1)
        sink_printf(out, "thinned: kept 1 in %u of each cpu's samples, evenly over the window, each weighing %u "
                    "(%llu left out: the window made more than its copy holds)\n", fold->kept_one_in,
                    fold->kept_one_in, (unsigned long long)fold->thinned);
    print_per_cpu(out, run, fold);
    print_rates(out, run, fold);
    print_cpu_notes(out, run, tab);
    if (run->wall) {
        print_wall_split(out, run, fold);
        print_wall_tasks(out, fold);
    }

    if (fold->labelled)
        print_label_shares(out, fold);
    if (fold->labels_dropped)
        sink_printf(out, "labels dropped: %llu label sets refused in the window, the pool of %u was full (`label` "
                    "shows it): those tasks kept their sets\n", (unsigned long long)fold->labels_dropped,
                    (unsigned)LABEL_TABLE_SETS);

    if (fold->samples == 0) {
        if (filter && filter->by_label && filter->by_pid) {
            sink_printf(out, "no samples for pid %u with label %s=%s: the task may have been asleep, or without "
                        "that label, the whole window\n", filter->pid, filter->label.key, filter->label.value);
        } else if (filter && filter->by_label) {
            sink_printf(out, "no samples with label %s=%s: no task that carried it was sampled in the window\n",
                        filter->label.key, filter->label.value);
        } else if (filter && filter->by_pid && run->wall) {
            sink_printf(out, "no samples for pid %u: the task ended before the first sweep\n", filter->pid);
        } else if (filter && filter->by_pid) {
            sink_printf(out, "no samples for pid %u: the task may simply have been asleep the whole window\n",
                        filter->pid);
        } else {
            sink_puts(out, "no samples: nothing was sampled in the window\n");
            if (!run->tick_reason)
                sink_puts(out, "idle CPUs contribute nothing on the counter: it counts unhalted cycles\n");
        }
    } else {
        print_chains(out, tab, fold, max_chains ? max_chains : 1);
    }
    return 0;
}

int profile_report(struct profile_run *run, const struct profile_filter *filter, unsigned max_chains,
                   const struct symtab *tab, struct sink *out)
{
    struct profile_fold *fold = profile_fold_create();
    if (!fold) {
        sink_puts(out, "profile: out of memory\n");
        return -1;
    }
    profile_fold_drain(fold, run, filter, tab);
    profile_report_print(run, fold, filter, max_chains, tab, out);
    profile_fold_destroy(fold);
    return 0;
}

/* ---- the kept report ------------------------------------------------------------------------------- */

char profile_kept_report[PROFILE_KEPT_REPORT_MAX];
uint32_t profile_kept_length;
_Atomic uint32_t profile_kept_run;

void profile_kept_open(struct profile_kept_writer *w, struct sink *out)
{
    atomic_store(&profile_kept_run, 0);
    buffer_sink_init(&w->kept, profile_kept_report, sizeof profile_kept_report);
    tee_sink_init(&w->both, out, &w->kept.sink);
    w->sink = &w->both.sink;
}

void profile_kept_close(struct profile_kept_writer *w, uint32_t run)
{
    profile_kept_length = (uint32_t)(w->kept.len + w->kept.truncated);
    atomic_store(&profile_kept_run, run);
}
