/* kernel/profiler/report.c: the profiler's report -- folding a run's samples by call chain into a fixed table
 * of PROFILE_CHAIN_TABLE chains, and printing the hottest of them. Task context only: this is where the
 * chain table is allocated and where addresses are resolved to symbols, neither of which the sample path
 * may do. Pure apart from kmalloc and the sink, so the host tests drive it with synthetic rings and symbols.
 *
 * The leaf folds by symbol and carries the span of offsets seen, because a sample lands on any instruction
 * of the function it interrupted; callers fold by exact return address, because each call site has exactly
 * one, so two call sites of one function are two chains.
 *
 * The report also counts samples per label set (the breakdown line), and the raw form prints every sample
 * as a line of kernel/profiler/raw.h instead of folding. */
#include "kernel/profiler/report.h"

#include "hal/context.h"
#include "hal/cpu.h"
#include "kernel/lib/format.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/raw.h"
#include "kernel/lib/string.h"

#define CALLERS_MAX (PROFILE_MAX_FRAMES - 1)
/* Open-addressed index of the table, twice its size so a probe finds an empty slot quickly even when the
 * table is full; each slot holds an entry number + 1, 0 when empty. */
#define INDEX_SLOTS (2 * PROFILE_CHAIN_TABLE)
_Static_assert((INDEX_SLOTS & (INDEX_SLOTS - 1)) == 0, "the index is masked, so its size is a power of two");
_Static_assert(PROFILE_CHAIN_TABLE < 256, "index slots hold an entry number + 1 in a byte");

struct chain {
    uint64_t leaf;       /* the leaf's symbol start, or its raw address when it does not resolve */
    const char *name;    /* the leaf's symbol, NULL when unresolved */
    uint64_t min_offset; /* span of leaf offsets seen (resolved leaves only) */
    uint64_t max_offset;
    uint64_t callers[CALLERS_MAX]; /* exact return addresses, innermost first */
    uint32_t ncallers;
    uint32_t count;
    uint8_t flags;         /* PROFILE_REC_IRQS_OFF, _IN_IRQ, _LET_IN: part of the chain's identity */
    uint64_t held_off_us;  /* let-in chains: summed over their samples */
};

/* Samples per label set. Sets are interned and never freed, so the pointer is the set's identity; there are
 * at most LABEL_TABLE_SETS of them, plus NULL for samples without one. */
struct label_share {
    const struct label_set *set;
    uint32_t count;
};

struct profile_fold {
    struct chain chains[PROFILE_CHAIN_TABLE]; /* in first-seen order, which is what breaks ties */
    uint8_t index[INDEX_SLOTS];
    uint32_t used;
    uint64_t samples;     /* every sample folded, tracked or not */
    uint64_t not_tracked; /* samples of chains that found the table full */
    struct label_share shares[LABEL_TABLE_SETS + 1]; /* first-seen order */
    uint32_t nshares;
    bool labelled;        /* some sample carried a set */
    uint32_t cpu_samples[MAX_CPUS]; /* samples folded per CPU */
    uint64_t drained;     /* records taken out of the rings, wanted or not */
};

struct profile_fold *profile_fold_create(void)
{
    struct profile_fold *fold = kzalloc(sizeof *fold);
    return fold;
}

void profile_fold_destroy(struct profile_fold *fold)
{
    kfree(fold);
}

uint64_t profile_fold_samples(const struct profile_fold *fold)
{
    return fold->samples;
}

/* Multiplicative hashing, word by word; the top half of the product is where the input bits have spread. */
static uint32_t chain_hash(uint64_t leaf, const uintptr_t *callers, uint32_t ncallers, uint8_t flags)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio */
    uint64_t h = (leaf ^ ncallers ^ ((uint64_t)flags << 56)) * k;
    for (uint32_t i = 0; i < ncallers; i++)
        h = (h ^ callers[i]) * k;
    return (uint32_t)(h >> 32);
}

static bool chain_matches(const struct chain *c, uint64_t leaf, bool resolved, const uintptr_t *callers,
                          uint32_t ncallers, uint8_t flags)
{
    if (c->leaf != leaf || (c->name != NULL) != resolved || c->ncallers != ncallers || c->flags != flags)
        return false;
    for (uint32_t i = 0; i < ncallers; i++)
        if (c->callers[i] != callers[i])
            return false;
    return true;
}

void profile_fold_add(struct profile_fold *fold, const struct symtab *tab, const struct profile_record *rec)
{
    uint32_t nframes = rec->nframes;
    if (nframes > PROFILE_MAX_FRAMES)
        nframes = PROFILE_MAX_FRAMES;
    /* The sampler always writes frame 0; a record without it is folded as a leaf of address 0. */
    uint64_t pc = nframes > 0 ? rec->frames[0] : 0;
    const uintptr_t *callers = &rec->frames[1];
    uint32_t ncallers = nframes > 0 ? nframes - 1 : 0;

    struct symbol_hit hit;
    bool resolved = symtab_lookup(tab, pc, &hit);
    uint64_t leaf = resolved ? hit.start : pc;

    /* The marks keep interrupts-off and in-interrupt samples apart from the same chain running normally. */
    uint8_t flags = rec->flags & (PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ | PROFILE_REC_LET_IN);
    fold->samples++;
    if (rec->cpu < MAX_CPUS)
        fold->cpu_samples[rec->cpu]++;
    uint32_t slot = chain_hash(leaf, callers, ncallers, flags) & (INDEX_SLOTS - 1);
    for (;;) {
        uint32_t entry = fold->index[slot];
        if (entry == 0)
            break;
        struct chain *c = &fold->chains[entry - 1];
        if (chain_matches(c, leaf, resolved, callers, ncallers, flags)) {
            c->count++;
            c->held_off_us += rec->held_off_us;
            if (resolved) {
                if (hit.offset < c->min_offset)
                    c->min_offset = hit.offset;
                if (hit.offset > c->max_offset)
                    c->max_offset = hit.offset;
            }
            return;
        }
        slot = (slot + 1) & (INDEX_SLOTS - 1);
    }

    if (fold->used == PROFILE_CHAIN_TABLE) {
        fold->not_tracked++;
        return;
    }
    struct chain *c = &fold->chains[fold->used];
    c->leaf = leaf;
    c->name = resolved ? hit.name : NULL;
    c->min_offset = c->max_offset = resolved ? hit.offset : 0;
    for (uint32_t i = 0; i < ncallers; i++)
        c->callers[i] = callers[i];
    c->ncallers = ncallers;
    c->count = 1;
    c->flags = flags;
    c->held_off_us = rec->held_off_us;
    fold->used++;
    fold->index[slot] = (uint8_t)fold->used;
}

/* Counts rec's label set (the report's breakdown). */
static void tally_labels(struct profile_fold *fold, const struct label_set *set)
{
    if (set)
        fold->labelled = true;
    for (uint32_t i = 0; i < fold->nshares; i++) {
        if (fold->shares[i].set == set) {
            fold->shares[i].count++;
            return;
        }
    }
    /* Room for every set the table can intern and NULL: a new one always fits. */
    if (fold->nshares < LABEL_TABLE_SETS + 1)
        fold->shares[fold->nshares++] = (struct label_share){ set, 1 };
}

/* ---- printing ---------------------------------------------------------------------------------------- */

/* part/whole in tenths of a percent, rounded half up, without floating point (the kernel has none). */
static void print_percent(struct sink *out, uint64_t part, uint64_t whole)
{
    uint64_t tenths = whole ? (part * 1000 + whole / 2) / whole : 0;
    sink_printf(out, "%llu.%llu%%", (unsigned long long)(tenths / 10), (unsigned long long)(tenths % 10));
}

/* A caller is a return address: it is resolved as one (symtab_lookup_return), by the call instruction before
 * it, so a call that ends its function (to one that does not return) is not blamed on the next function. The
 * line is the panic backtrace's, so the two read alike. */
static void print_caller(struct sink *out, const struct symtab *tab, uint64_t addr)
{
    struct symbol_hit hit;
    if (symtab_lookup_return(tab, addr, &hit))
        sink_printf(out, "        <- %s+0x%llx\n", hit.name, (unsigned long long)hit.offset);
    else
        sink_printf(out, "        <- 0x%llx\n", (unsigned long long)addr);
}

/* " [irqs off]", " [in irq]", " [in irq, irqs off]", " [let in after 9.8 ms irqs off]": what the chain's
 * samples interrupted, when it was not ordinary code with interrupts on. */
static void print_marks(struct sink *out, const struct chain *c)
{
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

static void print_chain(struct sink *out, const struct symtab *tab, const struct chain *c, uint64_t total)
{
    print_percent(out, c->count, total);
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

/* Hottest first; equal counts keep first-seen order (insertion sort is stable, and the table is small). */
static void sort_hottest(const struct profile_fold *fold, uint8_t *order)
{
    for (uint32_t i = 0; i < fold->used; i++) {
        uint8_t e = (uint8_t)i;
        uint32_t j = i;
        while (j > 0 && fold->chains[order[j - 1]].count < fold->chains[e].count) {
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
        print_chain(out, tab, &fold->chains[order[i]], fold->samples);

    if (fold->used > shown) {
        uint64_t rest = 0;
        for (uint32_t i = shown; i < fold->used; i++)
            rest += fold->chains[order[i]].count;
        sink_printf(out, "... %u more chains, %llu samples (", fold->used - shown, (unsigned long long)rest);
        print_percent(out, rest, fold->samples);
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
        while (j > 0 && fold->shares[order[j - 1]].count < fold->shares[i].count) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
    char text[LABEL_SET_TEXT_MAX];
    sink_puts(out, "labels: ");
    for (uint32_t i = 0; i < fold->nshares; i++) {
        const struct label_share *share = &fold->shares[order[i]];
        if (i)
            sink_puts(out, ", ");
        print_percent(out, share->count, fold->samples);
        label_set_format(share->set, text, sizeof text);
        sink_printf(out, " (%u) %s", share->count, text);
    }
    sink_puts(out, "\n");
}

bool profile_record_wanted(const struct profile_record *rec, uint32_t run, const struct profile_filter *filter)
{
    if (rec->run != run)
        return false; /* a straggler of an earlier run, committed after this one reset the ring */
    if (filter && filter->by_pid && rec->pid != filter->pid)
        return false;
    if (filter && filter->by_label && !label_set_has(rec->labels, filter->label.key, filter->label.value))
        return false;
    return true;
}

void profile_fold_drain(struct profile_fold *fold, struct profile_run *run, const struct profile_filter *filter,
                        const struct symtab *tab)
{
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        struct profile_ring *ring = &run->rings[cpu];
        /* Only what is in the ring now: what commits meanwhile waits for the next drain. */
        for (uint32_t n = profile_ring_count(ring); n > 0; n--) {
            const struct profile_record *rec = profile_ring_peek(ring);
            if (profile_record_wanted(rec, run->run, filter)) {
                profile_fold_add(fold, tab, rec);
                tally_labels(fold, rec->labels);
            }
            fold->drained++;
            profile_ring_advance(ring);
        }
    }
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
 * mixed one naming how many CPUs each source had. */
static void print_source(struct sink *out, const struct profile_run *run)
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
    uint64_t hz = run->period_ns ? 1000000000 / run->period_ns : 0;
    if (!run->tick_reason && on_tick && on_counter) {
        sink_printf(out, "source mixed: %s every %llu cycles (~%llu Hz) on %u cpus, tick at %u Hz on %u\n",
                    run->source, (unsigned long long)run->period_cycles, (unsigned long long)hz, on_counter,
                    run->tick_hz, on_tick);
    } else if (!run->tick_reason && on_tick) {
        sink_printf(out, "source tick at %u Hz (no cpu kept its counter)\n", run->tick_hz);
    } else if (!run->tick_reason) {
        sink_printf(out, "source %s every %llu cycles (~%llu Hz)\n", run->source,
                    (unsigned long long)run->period_cycles, (unsigned long long)hz);
    } else {
        sink_printf(out, "source tick at %u Hz (%s)\n", run->tick_hz, run->tick_reason);
    }
}

/* "per cpu: 0:1380 1:1391 2:1370/12 3:1380": samples, and drops after a '/' where there were any, wrapped
 * so 64 CPUs still fit a screen; a CPU whose source is not the header's gets it in its own line below. */
static void print_per_cpu(struct sink *out, const struct profile_run *run, const struct profile_fold *fold)
{
    sink_puts(out, "per cpu:");
    unsigned column = 8;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        char item[40];
        uint32_t drops = profile_ring_drops(&run->rings[cpu]);
        size_t n = drops ? ksnprintf(item, sizeof item, " %u:%u/%u", cpu, fold->cpu_samples[cpu], drops)
                         : ksnprintf(item, sizeof item, " %u:%u", cpu, fold->cpu_samples[cpu]);
        if (column + n > 100) {
            sink_puts(out, "\n         ");
            column = 8;
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
    uint64_t held_total = 0, elsewhere_total = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        const struct profiler_cpu_run *c = cpu_account(run, cpu);
        if (!c)
            continue;
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
}

int profile_report_print(const struct profile_run *run, const struct profile_fold *fold,
                         const struct profile_filter *filter, unsigned max_chains, const struct symtab *tab,
                         struct sink *out)
{
    unsigned cpus = 0;
    uint64_t dropped = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        cpus += fold->cpu_samples[cpu] != 0;
        dropped += profile_ring_drops(&run->rings[cpu]);
    }

    sink_printf(out, "profiled %u ms\n", run->window_ms);
    sink_printf(out, "%llu samples on %u cpus, %llu dropped, ", (unsigned long long)fold->samples, cpus,
                (unsigned long long)dropped);
    print_source(out, run);
    print_per_cpu(out, run, fold);
    print_cpu_notes(out, run, tab);

    if (fold->labelled)
        print_label_shares(out, fold);

    if (fold->samples == 0) {
        if (filter && filter->by_label && filter->by_pid) {
            sink_printf(out, "no samples for pid %u with label %s=%s: the task may have been asleep, or without "
                        "that label, the whole window\n", filter->pid, filter->label.key, filter->label.value);
        } else if (filter && filter->by_label) {
            sink_printf(out, "no samples with label %s=%s: no task that carried it was sampled in the window\n",
                        filter->label.key, filter->label.value);
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

/* ---- the raw form ------------------------------------------------------------------------------------ */

size_t profile_raw_record_line(const struct profile_record *rec, char *line, size_t cap)
{
    struct profile_raw_sample s;
    memset(&s, 0, sizeof s);
    s.cpu = rec->cpu;
    s.pid = rec->pid;
    s.time_ns = rec->time_ns;
    if (rec->labels)
        s.labels = *rec->labels;
    s.nframes = rec->nframes > PROFILE_MAX_FRAMES ? PROFILE_MAX_FRAMES : rec->nframes;
    for (unsigned i = 0; i < s.nframes; i++)
        s.frames[i] = rec->frames[i];
    if (s.nframes == 0) {
        /* The sampler always writes frame 0; as in the fold, a record without it is a leaf of address 0. */
        s.nframes = 1;
        s.frames[0] = 0;
    }
    return profile_raw_format_sample(&s, line, cap);
}

void profile_raw_begin(const struct profile_run *run, const char *build_id, struct sink *out)
{
    char line[PROFILE_RAW_LINE_MAX];
    struct profile_raw_header h;
    memset(&h, 0, sizeof h);
    profile_raw_source_word(run->source_name ? run->source_name : run->source, h.source, sizeof h.source);
    h.period_ns = run->period_ns;
    h.window_ms = run->window_ms;
    h.cpus = run->ncpus;
    if (build_id && strlen(build_id) < sizeof h.build_id)
        strlcpy(h.build_id, build_id, sizeof h.build_id);
    size_t n = profile_raw_format_header(&h, line, sizeof line);
    if (n == 0) {
        /* a build id that is not hex: say none rather than send no header */
        h.build_id[0] = 0;
        n = profile_raw_format_header(&h, line, sizeof line);
    }
    sink_write(out, line, n);
}

void profile_raw_drain(struct profile_run *run, const struct profile_filter *filter, struct sink *out,
                       struct profile_raw_trailer *t)
{
    char line[PROFILE_RAW_LINE_MAX];
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        struct profile_ring *ring = &run->rings[cpu];
        /* Only what is in the ring now, as in the fold. */
        for (uint32_t k = profile_ring_count(ring); k > 0; k--) {
            const struct profile_record *rec = profile_ring_peek(ring);
            if (profile_record_wanted(rec, run->run, filter)) {
                size_t n = profile_raw_record_line(rec, line, sizeof line);
                if (n) {
                    sink_write(out, line, n);
                    t->samples++;
                }
            }
            profile_ring_advance(ring);
        }
    }
}

void profile_raw_end(const struct profile_run *run, struct profile_raw_trailer *t, struct sink *out)
{
    char line[PROFILE_RAW_LINE_MAX];
    t->dropped = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++)
        t->dropped += profile_ring_drops(&run->rings[cpu]);
    size_t n = profile_raw_format_trailer(t, line, sizeof line);
    sink_write(out, line, n);
}

int profile_report_raw(struct profile_run *run, const struct profile_filter *filter, const char *build_id,
                       struct sink *out)
{
    struct profile_raw_trailer t = { 0, 0 };
    profile_raw_begin(run, build_id, out);
    profile_raw_drain(run, filter, out, &t);
    profile_raw_end(run, &t, out);
    return 0;
}
