/* kernel/profiler/pprof_encode.c: the pprof encoder of a CPU or wall profile (kernel/profiler/pprof_encode.h) --
 * one pass over the fold through the builder (kernel/profiler/pprof_builder.c): the header of the run's kind,
 * its comments, then each key as a sample with its labels, then the samples a full fold could not keep. The
 * builder's tables are sized from the fold before anything is written. */
#include "kernel/profiler/pprof_encode.h"

#include "kernel/labels.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"
#include "kernel/profiler_ring.h"
#include "kernel/task.h"

#define STRINGS_FIXED 64 /* the strings any profile has (types, units, label keys, marks, states, comments) */
#define STRINGS_PER_ENTRY (PROFILE_MAX_FRAMES + 2 * LABEL_MAX_PAIRS + 3) /* functions, pairs, span, cpu, pid */

/* ---- samples ------------------------------------------------------------------------------------------- */

/* The `context` words of a sample's marks, as the console report marks it: let-in alone, else irqs-off
 * and/or in-irq. */
static void context_labels(struct pprof_builder *b, uint8_t flags, uint64_t held_off_us)
{
    uint32_t context = pprof_intern(b, "context");
    if (flags & PROFILE_REC_LET_IN) {
        pprof_label_ids(b, context, pprof_intern(b, "let-in"));
        pprof_label_num(b, "held_off_us", held_off_us, "microseconds");
        return;
    }
    if (flags & PROFILE_REC_IRQS_OFF)
        pprof_label_ids(b, context, pprof_intern(b, "irqs-off"));
    if (flags & PROFILE_REC_IN_IRQ)
        pprof_label_ids(b, context, pprof_intern(b, "in-irq"));
}

/* A wall sample's state -- running, runnable, waiting -- and what a waiting one waited on, as `profile ... wall`
 * marks its chains. */
static void state_labels(struct pprof_builder *b, uint8_t activity, uint8_t waiting_on)
{
    pprof_label(b, "state", task_activity_name(activity));
    if (activity == TASK_ACT_WAITING)
        pprof_label(b, "waiting_on", task_wait_name(waiting_on));
}

/* The set's pairs with span=N in its place among the keys (as the raw format writes it). */
static void set_labels(struct pprof_builder *b, const struct label_set *set, uint64_t span)
{
    unsigned n = set ? set->npairs : 0;
    bool span_put = span == 0;
    for (unsigned i = 0; i <= n; i++) {
        const struct label_pair *p = i < n ? &set->pairs[i] : NULL;
        if (!span_put && (!p || strcmp(p->key, LABEL_SPAN_KEY) > 0)) {
            uint32_t key = pprof_intern(b, LABEL_SPAN_KEY);
            pprof_label_ids(b, key, pprof_intern_u64(b, span));
            span_put = true;
        }
        if (p)
            pprof_label(b, p->key, p->value);
    }
}

static void write_sample(struct pprof_builder *b, const struct pprof_fold_entry *entry)
{
    uint64_t locs[PROFILE_MAX_FRAMES];
    for (unsigned i = 0; i < entry->nframes; i++)
        locs[i] = pprof_location(b, entry->frames[i], i == 0);
    uint64_t values[2] = { entry->count, entry->weight };
    pb_mark m = pprof_sample_begin(b, locs, entry->nframes, values, 2);
    set_labels(b, entry->labels, entry->span);
    if (entry->flags & PROFILE_REC_WALL)
        state_labels(b, entry->activity, entry->waiting_on);
    else
        context_labels(b, entry->flags, entry->held_off_us);
    /* strings, not numbers, as profexport writes them: pprof reads a numeric label of 0 without a unit as no
     * label at all, and cpu 0 is a CPU */
    uint32_t key = pprof_intern(b, "cpu");
    pprof_label_ids(b, key, pprof_intern_u64(b, entry->cpu));
    key = pprof_intern(b, "pid");
    pprof_label_ids(b, key, pprof_intern_u64(b, entry->pid));
    pprof_sample_end(b, m);
}

/* The samples that found the fold full: one sample of a location of their own, outside the mapping. */
static void write_not_tracked(struct pprof_builder *b, const struct pprof_fold *fold)
{
    uint64_t lid = pprof_named_location(b, PPROF_NOT_TRACKED);
    uint64_t values[2] = { fold->not_tracked, fold->not_tracked_weight };
    pprof_sample_end(b, pprof_sample_begin(b, &lid, 1, values, 2));
}

/* ---- the profile's own fields ------------------------------------------------------------------------- */

static void write_header(struct pprof_builder *b, const struct pprof_fold *f, const struct pprof_run_info *info)
{
    const char *value = info->wall ? "wall" : info->cycles ? "cycles" : "cpu";
    const char *unit = info->cycles && !info->wall ? "count" : "nanoseconds";
    pprof_write_header(b, &(struct pprof_header){
        .sample_types = { { "samples", "count" }, { value, unit } },
        .ntypes = 2,
        .period_type = { value, unit },
        .period = info->period,
        .default_type = value,
        .time_nanos = info->time_nanos,
        .duration_nanos = (uint64_t)info->window_ms * 1000000,
        .mapping = { info->memory_start, info->memory_limit, info->file_offset, info->build_id },
    });

    /* As profexport's comments read: the source and period, the window, the drops; then what only the
     * kernel's fold can lose, and the build. */
    char period[48];
    if (info->cycles && !info->wall)
        ksnprintf(period, sizeof period, "period=%llu unit=cycles", (unsigned long long)info->period);
    else
        ksnprintf(period, sizeof period, "period_ns=%llu", (unsigned long long)info->period);
    pprof_comment(b, "kprof kernel: source=%s %s window_ms=%u cpus=%u samples=%llu dropped=%llu", info->source,
                  period, info->window_ms, info->ncpus, (unsigned long long)f->samples,
                  (unsigned long long)info->ring_drops);
    if (info->wall)
        pprof_comment(b, "kprof kernel: wall: every task every %llu ms whatever its state (label state=running|"
                         "runnable|waiting, waiting_on=WAIT); a sample's wall/nanoseconds is the time it stands for",
                      (unsigned long long)info->period / 1000000);
    pprof_comment(b, "kprof kernel: folded %u keys of %u, not_tracked=%llu (samples of keys past a full table)",
                  f->used, PPROF_FOLD_ENTRIES, (unsigned long long)f->not_tracked);
    pprof_comment(b, "kprof kernel: labels_dropped=%llu (label sets the pool refused, full)",
                  (unsigned long long)f->labels_dropped);
    pprof_comment(b, "kprof kernel: build_id=%s", info->build_id[0] ? info->build_id : "none");
}

bool pprof_encode(const struct pprof_fold *fold, const struct pprof_run_info *info, const struct symtab *tab,
                  uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    struct pprof_builder b;
    uint32_t frames = fold->used * PROFILE_MAX_FRAMES + 1; /* and the "[not tracked]" location */
    if (!pprof_builder_init(&b, tab, frames, STRINGS_FIXED + fold->used * STRINGS_PER_ENTRY))
        return false;
    write_header(&b, fold, info);
    for (uint32_t i = 0; i < fold->used; i++)
        write_sample(&b, &fold->entries[i]);
    if (fold->not_tracked)
        write_not_tracked(&b, fold);
    return pprof_builder_finish(&b, data, len);
}
