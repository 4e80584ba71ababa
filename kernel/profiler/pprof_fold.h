/* kernel/profiler/pprof_fold.h: the fold of a pprof profile (kernel/profiler/pprof_fold.c) -- a run's samples
 * folded while the window runs, by everything a pprof sample is told apart by: the exact frames, the label
 * set, the span, the pid, the marks (a wall run's: the task's state and what it waited on) and the CPU, each key
 * with its count, summed weight and summed let-in lateness. Unlike the console's fold (kernel/profiler/fold.h)
 * it resolves nothing: it runs every PROFILE_DRAIN_MS inside the window it profiles, so it only compares words;
 * the encoder (kernel/profiler/pprof_encode.h) resolves the addresses once, after the stop. */
#ifndef KERNEL_PROFILER_PPROF_FOLD_H
#define KERNEL_PROFILER_PPROF_FOLD_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/labels.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler_ring.h"

#define PPROF_FOLD_ENTRIES 4096 /* distinct keys one profile holds; samples of more land in "[not tracked]" */
/* Open-addressed index, twice the table so probes stay short when it is full; entry number + 1, 0 empty. */
#define PPROF_FOLD_SLOTS (2 * PPROF_FOLD_ENTRIES)

/* One key and what its samples add up to. */
struct pprof_fold_entry {
    uintptr_t frames[PROFILE_MAX_FRAMES]; /* leaf first, then return addresses: exactly as recorded */
    const struct label_set *labels;       /* the fold holds a reference (label_hold); NULL for none */
    uint64_t span;                        /* the task's span, 0 for none */
    uint32_t pid;
    uint16_t cpu;
    uint8_t nframes; /* 0 .. PROFILE_MAX_FRAMES */
    uint8_t flags;   /* PROFILE_REC_IRQS_OFF, _IN_IRQ, _LET_IN; or PROFILE_REC_WALL */
    uint32_t count;
    uint8_t activity;   /* a wall sample's (PROFILE_REC_WALL): enum task_activity */
    uint8_t waiting_on; /* and, waiting, enum task_wait */
    uint64_t weight;      /* profile_record_weight summed: in the run's unit */
    uint64_t held_off_us; /* let-in samples' lateness summed (0 for a wall sample, whose word says its state) */
};

struct pprof_fold {
    struct pprof_fold_entry entries[PPROF_FOLD_ENTRIES]; /* first-seen order */
    uint16_t index[PPROF_FOLD_SLOTS];
    uint32_t used;
    uint64_t samples;             /* every sample folded, tracked or not */
    uint64_t weight;
    uint64_t not_tracked;         /* samples whose key found the table full: one "[not tracked]" sample */
    uint64_t not_tracked_weight;
    uint64_t labels_dropped;      /* label sets the pool refused during the window (the caller fills it) */
};

/* Task context: allocated zeroed on the heap, NULL when out of memory. Destroying it gives back its
 * references to label sets; NULL is ignored. */
struct pprof_fold *pprof_fold_create(void);
void pprof_fold_destroy(struct pprof_fold *fold);

/* Task context, while the record is still in its ring (its label set is valid until drained): folds one
 * record, taking a reference to its label set when its key is new. */
void pprof_fold_add(struct pprof_fold *fold, const struct profile_record *rec);

/* The records now in run's rings that pass filter (NULL: all), folded and consumed (profiler_drain). */
void pprof_fold_drain(struct pprof_fold *fold, struct profile_run *run, const struct profile_filter *filter);

#endif
