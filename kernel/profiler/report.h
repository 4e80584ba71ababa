/* kernel/profiler/report.h: what becomes of a run's samples (kernel/profiler/report.c) -- folded by call chain
 * into a fixed table and printed as the report, or written out one line each in the raw format
 * (kernel/profiler/raw.h) -- and the filter both take. */
#ifndef KERNEL_PROFILER_REPORT_H
#define KERNEL_PROFILER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"

#define PROFILE_CHAIN_TABLE 128    /* distinct chains a report folds; more are counted, not shown */

struct profile_filter {
    bool by_pid; /* false: every task */
    uint32_t pid;
    bool by_label; /* true: only samples whose label set has the pair label */
    struct label_pair label;
};

/* Folds the records of run in its rings that pass filter (consuming them), and prints the report of the
 * max_chains hottest chains to out, resolving addresses through tab. Task context: the chain table is
 * allocated on the heap. Returns 0, or -1 after printing "profile: out of memory".
 *
 * When any sample folded carried a label set, one line follows the header: the share and count of the
 * samples per label set, hottest first (ties in first-seen order), "(none)" for samples without one --
 * "labels: 62.5% (250) cmd=profile, 37.5% (150) (none)"; the counts add up to the header's total. */
int profile_report(struct profile_run *run, const struct profile_filter *filter, unsigned max_chains,
                   const struct symtab *tab, struct sink *out);

/* The raw form of the same run (kernel/profiler/raw.h): a header naming build_id (hex, "" for none), every
 * record that passes filter as one line (consuming them), and a trailer with the number of lines and drops.
 * Task context; allocates nothing. Returns 0. */
int profile_report_raw(struct profile_run *run, const struct profile_filter *filter, const char *build_id,
                       struct sink *out);

/* The same in steps, for a window drained while it runs (the profile command): the header of the raw form,
 * the records now in the rings that pass filter as lines (consumed, counted into *t), and the trailer. */
struct profile_raw_trailer;
void profile_raw_begin(const struct profile_run *run, const char *build_id, struct sink *out);
void profile_raw_drain(struct profile_run *run, const struct profile_filter *filter, struct sink *out,
                       struct profile_raw_trailer *t);
void profile_raw_end(const struct profile_run *run, struct profile_raw_trailer *t, struct sink *out);

/* Whether rec belongs to run and passes filter (NULL: every record of the run): a record of an earlier run is
 * a straggler, committed after this one reset the ring. */
bool profile_record_wanted(const struct profile_record *rec, uint32_t run, const struct profile_filter *filter);
/* The raw sample line of rec (kernel/profiler/raw.h) into line; its length, 0 if it cannot be written (it
 * always can in PROFILE_RAW_LINE_MAX: frames are clamped to 1..8 and labels come from interned sets). */
size_t profile_raw_record_line(const struct profile_record *rec, char *line, size_t cap);

/* The fold on its own, for the report and for measuring its cost per sample. */
struct profile_fold;
struct profile_fold *profile_fold_create(void); /* NULL when out of memory */
void profile_fold_destroy(struct profile_fold *fold);
void profile_fold_add(struct profile_fold *fold, const struct symtab *tab, const struct profile_record *rec);
uint64_t profile_fold_samples(const struct profile_fold *fold);
/* Folds the records now in run's rings that pass filter (consuming them): called while the window runs, so
 * the rings never fill, and once more after the stop. */
void profile_fold_drain(struct profile_fold *fold, struct profile_run *run, const struct profile_filter *filter,
                        const struct symtab *tab);
/* The report of what fold holds: the header (window, totals, the source and its rate), the per-CPU line and
 * its notes, the label breakdown and the max_chains hottest chains. Returns 0. */
int profile_report_print(const struct profile_run *run, const struct profile_fold *fold,
                         const struct profile_filter *filter, unsigned max_chains, const struct symtab *tab,
                         struct sink *out);

#endif
