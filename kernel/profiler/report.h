/* kernel/profiler/report.h: the report of a run (kernel/profiler/report.c): what the fold
 * (kernel/profiler/fold.h) holds, printed -- the header, the per-CPU line and its notes, the label breakdown
 * and the hottest chains. The raw form of a run, every sample a line, is kernel/profiler/raw.h. */
#ifndef KERNEL_PROFILER_REPORT_H
#define KERNEL_PROFILER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/run.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"

/* Folds the records of run in its rings that pass filter (consuming them), and prints the report of the
 * max_chains hottest chains to out, resolving addresses through tab. Task context: the chain table is
 * allocated on the heap. Returns 0, or -1 after printing "profile: out of memory".
 *
 * When any sample folded carried a label set, one line follows the header: the share and count of the
 * samples per label set, hottest first (ties in first-seen order), "(none)" for samples without one --
 * "labels: 62.5% (250) cmd=profile, 37.5% (150) (none)"; the counts add up to the header's total. */
int profile_report(struct profile_run *run, const struct profile_filter *filter, unsigned max_chains,
                   const struct symtab *tab, struct sink *out);

/* The report of what fold holds: the header (window, totals, the source and its rate), the per-CPU line and
 * its notes, the label breakdown and the max_chains hottest chains. Returns 0. */
int profile_report_print(const struct profile_run *run, const struct profile_fold *fold,
                         const struct profile_filter *filter, unsigned max_chains, const struct symtab *tab,
                         struct sink *out);

#endif
