/* kernel/profiler/pprof_encode.h: a pprof fold (kernel/profiler/pprof_fold.h) encoded as pprof's
 * profile.proto (kernel/profiler/pprof_encode.c, through the builder kernel/profiler/pprof_builder.h), shaped as
 * scripts/profexport writes its pprof from the raw format so the two read alike: sample types samples/count and
 * the run's own (cpu/nanoseconds on the tick, cycles/count on the counter, wall/nanoseconds for a wall run)
 * with the nominal period as period type and period; the kernel as the one
 * mapping with its build id; a location per distinct frame address (the leaf's own, a caller's return address
 * -- a return address is a location of its own even where it equals some leaf) with a line naming its
 * function from the baked symbols; the label sets and `span` as string labels, the marks as `context` labels,
 * a let-in's summed lateness as the number `held_off_us`, a wall sample's `state` (running, runnable, waiting)
 * and, waiting, `waiting_on` (sleep, input, net, task, device), `cpu` and `pid` as string labels; and the source,
 * period, window, drops and build id as comments. Samples whose key found the fold full are one sample of a
 * location of its own, function "[not tracked]". Task context (the heap). */
#ifndef KERNEL_PROFILER_PPROF_ENCODE_H
#define KERNEL_PROFILER_PPROF_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/profiler/pprof_builder.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/symbols.h"

#define PPROF_NOT_TRACKED "[not tracked]"

/* What the encoder says about the run besides the fold. */
struct pprof_run_info {
    const char *source;     /* one word, as the raw header names it ("tick", "pmu/nmi-intel-fixed-ctr1") */
    bool cycles;            /* the counter's unit (cycles/count); false: the tick's (cpu/nanoseconds) */
    bool wall;              /* a wall run: wall/nanoseconds, every task every period whatever its state */
    uint64_t period;        /* the nominal period, in that unit */
    uint32_t window_ms;     /* measured */
    unsigned ncpus;         /* CPUs with rings */
    uint64_t ring_drops;    /* samples the rings refused (full) */
    const char *build_id;   /* lowercase hex, "" for none */
    int64_t time_nanos;     /* wall clock at the start; 0 when the kernel has none */
    /* The kernel's mapping: where its text runs, and the file offset of memory_start in the ELF. */
    uint64_t memory_start;
    uint64_t memory_limit;
    uint64_t file_offset;
};

/* The whole profile into *data (kfree gives it back), *len bytes, uncompressed; false (nothing allocated)
 * when the heap or PPROF_ENCODE_LIMIT says no. Addresses resolve through tab (NULL: none resolve). */
bool pprof_encode(const struct pprof_fold *fold, const struct pprof_run_info *info, const struct symtab *tab,
                  uint8_t **data, size_t *len);

#endif
