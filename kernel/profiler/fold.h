/* kernel/profiler/fold.h: the fold (kernel/profiler/fold.c) -- a run's samples folded by call chain into a
 * fixed table of PROFILE_CHAIN_TABLE chains, with the samples counted per CPU and per label set. It takes its
 * records as a take callback of profiler_drain (kernel/profiler/run.h); the report (kernel/profiler/report.h)
 * prints what it holds, and so reads the table below; nothing else should. */
#ifndef KERNEL_PROFILER_FOLD_H
#define KERNEL_PROFILER_FOLD_H

#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/labels.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler_ring.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

#define PROFILE_CHAIN_TABLE 128    /* distinct chains a report folds; more are counted, not shown */
#define PROFILE_CHAIN_CALLERS (PROFILE_MAX_FRAMES - 1)
/* Open-addressed index of the table, twice its size so a probe finds an empty slot quickly even when the
 * table is full; each slot holds an entry number + 1, 0 when empty. */
#define PROFILE_FOLD_INDEX_SLOTS (2 * PROFILE_CHAIN_TABLE)
/* A wall run's tasks, by pid: an open-addressed table with room for every task the kernel can hold. */
#define PROFILE_FOLD_TASK_SLOTS 2048

/* One chain: the leaf folds by symbol and carries the span of offsets seen, because a sample lands on any
 * instruction of the function it interrupted; callers fold by exact return address, because each call site
 * has exactly one, so two call sites of one function are two chains. */
struct profile_chain {
    uint64_t leaf;       /* the leaf's symbol start, or its raw address when it does not resolve */
    const char *name;    /* the leaf's symbol, NULL when unresolved */
    uint64_t min_offset; /* span of leaf offsets seen (resolved leaves only) */
    uint64_t max_offset;
    uint64_t callers[PROFILE_CHAIN_CALLERS]; /* exact return addresses, innermost first */
    uint32_t ncallers;
    uint32_t count;
    uint64_t weight;       /* the periods its samples stand for, summed: what its percentage is of */
    uint8_t flags;         /* PROFILE_REC_IRQS_OFF, _IN_IRQ, _LET_IN: part of the chain's identity */
    uint8_t activity;      /* a wall sample's enum task_activity (0 on a CPU sample), and when waiting ... */
    uint8_t waiting_on;    /* ... its enum task_wait: both part of the chain's identity */
    uint64_t held_off_us;  /* let-in chains: summed over their samples */
};

/* Samples per label set. The fold holds a reference to each set (profile_fold_destroy gives them back), so
 * the pointer is the set's identity; there are at most LABEL_TABLE_SETS of them, plus NULL. */
struct profile_label_share {
    const struct label_set *set;
    uint32_t count;
    uint64_t weight;
};

/* A wall run's weight of one task, by what it was doing. */
struct profile_task_share {
    uint32_t pid;           /* 0: an empty slot (pid 0 is never a task's) */
    uint64_t weight[TASK_ACT_WAITING + 1]; /* by enum task_activity */
};

struct profile_fold {
    struct profile_chain chains[PROFILE_CHAIN_TABLE]; /* in first-seen order, which is what breaks ties */
    uint8_t index[PROFILE_FOLD_INDEX_SLOTS];
    uint32_t used;
    uint64_t samples;     /* every sample folded, tracked or not */
    uint64_t weight;      /* their periods summed (profile_record_weight): the whole the percentages are of */
    uint64_t not_tracked; /* samples of chains that found the table full */
    struct profile_label_share shares[LABEL_TABLE_SETS + 1]; /* first-seen order */
    uint32_t nshares;
    bool labelled;        /* some sample carried a set */
    uint64_t labels_dropped; /* label sets the pool refused (full) during the window: the report says so */
    uint32_t cpu_samples[MAX_CPUS]; /* samples folded per CPU */
    /* The window's capture kept each CPU's every Nth sample (kernel/profiler/capture.h), weighing N: set by its
     * caller for the report, as labels_dropped is. 0 or 1: it kept them all. */
    uint32_t kept_one_in;
    uint64_t thinned;     /* the samples that left out */
    /* A wall run's split: the weight of its samples by activity, the waiting ones by what they waited on, and
     * by task. */
    bool wall;
    uint64_t activity_weight[TASK_ACT_WAITING + 1];
    uint64_t waiting_weight[TASK_WAIT_KINDS];
    struct profile_task_share tasks[PROFILE_FOLD_TASK_SLOTS];
    uint32_t ntasks;
};

/* What a record weighs in the fold: its period, in the run's unit (1 when the record does not say). */
static inline uint64_t profile_record_weight(const struct profile_record *rec)
{
    return rec->period ? rec->period : 1;
}

/* Task context: the table is allocated on the heap (zeroed), NULL when out of memory; destroying it gives
 * back its references to label sets. */
struct profile_fold *profile_fold_create(void);
void profile_fold_destroy(struct profile_fold *fold);
/* Folds one record's chain, resolving its leaf through tab (the label tally is the drain's). */
void profile_fold_add(struct profile_fold *fold, const struct symtab *tab, const struct profile_record *rec);
uint64_t profile_fold_samples(const struct profile_fold *fold);
/* Folds the records now in run's rings that pass filter, and tallies their label sets (profiler_drain,
 * consuming them): called while the window runs, so the rings never fill, and once more after the stop. */
/* A drain's take (profiler_take_fn) into a fold: the record folded and its label set counted. */
struct profile_fold_into {
    struct profile_fold *fold;
    const struct symtab *tab; /* the symbols its leaves resolve through */
};
void profile_fold_take(void *into, const struct profile_record *rec);
void profile_fold_drain(struct profile_fold *fold, struct profile_run *run, const struct profile_filter *filter,
                        const struct symtab *tab);

#endif
