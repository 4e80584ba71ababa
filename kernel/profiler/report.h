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

/* part/whole as the report prints a share, "62.5%": tenths of a percent, rounded half up. */
void profile_report_print_percent(struct sink *out, uint64_t part, uint64_t whole);

/* The report's line naming the run's sample source, "source tick at 100 Hz (why not the counter)\n" or
 * "source pmu/nmi ... every N cycles\n": `profile top` names its source with the same words. */
void profile_report_print_source(struct sink *out, const struct profile_run *run);

/* The last report the profile command printed, kept word for word for the debugger (scripts/prof.py's
 * `prof report` prints it, so gdb shows exactly what the console showed): its text (NUL-terminated, the first
 * PROFILE_KEPT_REPORT_MAX - 1 bytes of a longer one), its length before truncation, and its run -- 0 while a
 * report is being written. Task context writes it, through profile_kept_open and profile_kept_close (kernel/profiler/report.c); a debugger
 * reads it stopped. */
#define PROFILE_KEPT_REPORT_MAX 16384
extern char profile_kept_report[PROFILE_KEPT_REPORT_MAX];
extern uint32_t profile_kept_length;
extern _Atomic uint32_t profile_kept_run;
/* A report being kept: out and the kept copy, both, through sink. */
struct profile_kept_writer {
    struct buffer_sink kept;
    struct tee_sink both;
    struct sink *sink; /* write the report here */
};
/* Opens the kept copy (its run 0 meanwhile) beside out. */
void profile_kept_open(struct profile_kept_writer *w, struct sink *out);
/* The copy is whole: its length, and the run it is of. */
void profile_kept_close(struct profile_kept_writer *w, uint32_t run);

#endif
