/* kernel/profiler.h: the sampling profiler -- the sample record and the per-CPU ring it is written into
 * (kernel/profiler.c, which also owns run control and the sample path), the fold of a run's samples by call
 * chain and its report (kernel/profiler_report.c), and the arguments of the `profile` command
 * (kernel/cmd_profile.c). The specification is shared/seeds/profiler-spec.txt. */
#ifndef KERNEL_PROFILER_H
#define KERNEL_PROFILER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "hal/context.h"
#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "kernel/labels.h"
#include "kernel/sink.h"
#include "kernel/symbols.h"

#define PROFILE_MAX_FRAMES 8       /* frame 0 is the interrupted instruction, then up to 7 callers */
#define PROFILE_RING_RECORDS 1024  /* per CPU: one second at the counter rate, ten at the tick rate */
#define PROFILE_CHAIN_TABLE 128    /* distinct chains a report folds; more are counted, not shown */

#define PROFILE_MS_MIN 1
#define PROFILE_MS_MAX 2000
#define PROFILE_MS_DEFAULT 1000
#define PROFILE_CHAINS_MIN 1
#define PROFILE_CHAINS_MAX PROFILE_CHAIN_TABLE
#define PROFILE_CHAINS_DEFAULT 8
/* The tick samples each CPU at TICK_HZ (hal/cpu.h): the raw format's period for a tick run. */
#define PROFILE_TICK_PERIOD_NS (1000000000u / TICK_HZ)

struct label_set;

/* One sample. Nothing in it is resolved: addresses keep, and a lookup has no business in an interrupt. */
struct profile_record {
    const struct label_set *labels; /* the task's label set when the sample was taken; NULL when it had none */
    int64_t time_ns;
    uint32_t pid;
    uint32_t run;     /* the run that took it: the report ignores a straggler from an earlier run */
    uint16_t cpu;
    uint16_t nframes; /* 1 .. PROFILE_MAX_FRAMES */
    uintptr_t frames[PROFILE_MAX_FRAMES];
};

/* A single-producer single-consumer ring of records. The producer is the owning CPU's interrupt (or NMI); the
 * consumer is the report, in task context. head and tail run freely and wrap at 2^32; their difference is the
 * fill, so the capacity must be a power of two. */
struct profile_ring {
    struct profile_record *records; /* NULL until the first start allocates it; then kept for the kernel's life */
    uint32_t mask;                  /* capacity - 1 */
    _Atomic uint32_t head;          /* next slot the producer fills; stored with release on commit */
    _Atomic uint32_t tail;          /* next slot the consumer reads */
    _Atomic uint32_t drops;         /* records refused because the ring was full */
};

/* Hands storage of capacity records (a power of two) to ring, with both indexes at start: any start is
 * valid, which is how the tests put the wrap at UINT32_MAX. */
static inline void profile_ring_init(struct profile_ring *ring, struct profile_record *storage,
                                     uint32_t capacity, uint32_t start)
{
    ring->records = storage;
    ring->mask = capacity - 1;
    atomic_store_explicit(&ring->head, start, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, start, memory_order_relaxed);
    atomic_store_explicit(&ring->drops, 0, memory_order_relaxed);
}

/* Producer. The slot to fill, or NULL: when the ring has no storage (not counted) or is full (counted as a
 * drop). The slot is invisible to the consumer until profile_ring_commit(). */
static inline struct profile_record *profile_ring_reserve(struct profile_ring *ring)
{
    if (!ring->records)
        return 0;
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* acquire: the consumer has finished reading every slot below tail before we write over it */
    uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    if (head - tail > ring->mask) {
        atomic_fetch_add_explicit(&ring->drops, 1, memory_order_relaxed);
        return 0;
    }
    return &ring->records[head & ring->mask];
}

/* Producer: publishes the slot profile_ring_reserve() returned. */
static inline void profile_ring_commit(struct profile_ring *ring)
{
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
}

/* Consumer: records waiting. Unsigned wrap-around makes head - tail right across 2^32. */
static inline uint32_t profile_ring_count(const struct profile_ring *ring)
{
    /* acquire: every record below head has been written in full */
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    return head - atomic_load_explicit(&ring->tail, memory_order_relaxed);
}

/* Consumer: the oldest waiting record, NULL when there is none; valid until profile_ring_advance(). */
static inline const struct profile_record *profile_ring_peek(const struct profile_ring *ring)
{
    if (!ring->records || profile_ring_count(ring) == 0)
        return 0;
    uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    return &ring->records[tail & ring->mask];
}

/* Consumer: done with the oldest record. */
static inline void profile_ring_advance(struct profile_ring *ring)
{
    uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    /* release: our reads of the slot are done before the producer may reuse it */
    atomic_store_explicit(&ring->tail, tail + 1, memory_order_release);
}

/* Consumer: forgets every waiting record and zeroes the drop count (a run's start). */
static inline void profile_ring_reset(struct profile_ring *ring)
{
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    atomic_store_explicit(&ring->tail, head, memory_order_release);
    atomic_store_explicit(&ring->drops, 0, memory_order_relaxed);
}

static inline uint32_t profile_ring_drops(const struct profile_ring *ring)
{
    return atomic_load_explicit(&ring->drops, memory_order_relaxed);
}

/* ---- run control and the sample path (kernel/profiler.c) ------------------------------------------------ */

/* Everything a report needs about one run. */
struct profile_run {
    struct profile_ring *rings; /* one per CPU, indexed by cpu_index() */
    unsigned ncpus;             /* rings with storage */
    uint32_t run;               /* the run number the records of this run carry (never 0) */
    const char *source;         /* how samples were taken: "tick", or a "pmu/..." counter */
    const char *source_name;    /* the same without the tick's reason: "tick" or the counter's name */
    uint64_t period_ns;         /* nominal time between two samples on one CPU */
    int64_t start_ns;
    uint32_t window_ms;         /* measured, from start to stop */
};

enum profiler_status {
    PROFILER_OK = 0,
    PROFILER_BUSY = -1,      /* another profile is running: "profile: busy" */
    PROFILER_NO_MEMORY = -2, /* the rings could not be allocated */
};

/* The sample path's entry points, profiler_tick and profiler_sample, are declared in hal/kernel_entry.h. */

/* Task context. Claims the profiler (PROFILER_BUSY when another run holds it), allocates the rings of the
 * CPUs that are online if they have none yet, empties them and starts a new run, described in *run. On
 * PROFILER_NO_MEMORY the claim is given back. */
int profiler_start(struct profile_run *run);
/* Ends the run: no CPU records into it after this returns, except a sample already past its check, which
 * the report recognises by its run number. Sets run->window_ms. */
void profiler_stop(struct profile_run *run);
/* Gives the claim back, after the report. */
void profiler_release(void);

/* ---- folding and the report (kernel/profiler_report.c) --------------------------------------------------- */

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

/* The raw form of the same run (kernel/profiler_raw.h): a header naming build_id (hex, "" for none), every
 * record that passes filter as one line (consuming them), and a trailer with the number of lines and drops.
 * Task context; allocates nothing. Returns 0. */
int profile_report_raw(struct profile_run *run, const struct profile_filter *filter, const char *build_id,
                       struct sink *out);

/* The fold on its own, for the report and for measuring its cost per sample. */
struct profile_fold;
struct profile_fold *profile_fold_create(void); /* NULL when out of memory */
void profile_fold_destroy(struct profile_fold *fold);
void profile_fold_add(struct profile_fold *fold, const struct symtab *tab, const struct profile_record *rec);
uint64_t profile_fold_samples(const struct profile_fold *fold);

/* ---- the command's arguments (kernel/cmd_profile.c) ----------------------------------------------------- */

#define PROFILE_USAGE "profile [ms] [pid|all] [chains|raw] [key=value]"

struct profile_request {
    uint32_t ms;
    struct profile_filter filter;
    unsigned chains;
    bool raw; /* every sample as a line (kernel/profiler_raw.h) instead of the report */
};

/* `profile [ms] [pid|all] [chains|raw] [key=value]` (argv[0] is the command's name). The numbers are
 * positional; the word `raw` and one label filter `key=value` (recognised by its '=') may stand anywhere
 * after the name, and `raw` takes no chain count. False for anything malformed, out of range or extra; *req
 * is then unspecified. */
bool profile_parse_args(int argc, char **argv, struct profile_request *req);

#endif
