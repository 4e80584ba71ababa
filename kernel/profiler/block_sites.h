/* kernel/profiler/block_sites.h: where tasks blocked, and for how long, since boot
 * (kernel/profiler/block_sites.c) -- Go's block profile in kprof's terms. Every blocking call (kernel/task.c: the
 * sleeps, task_block, task_wait_until) notes at its start the first frames of its caller's chain (the call site,
 * then its callers) and, when the task runs again, adds one wait and the time it waited (wake-up to running
 * included: the task's own clock at its end less its start) to the entry of that chain and wait kind.
 * /debug/pprof/block serves the table as pprof (kernel/profiler/block_profile.c): contentions/count and
 * delay/nanoseconds by chain.
 *
 * The table is fixed (BLOCK_SITES entries, allocated with the kernel) and lock-free: the blocked task itself adds
 * to it as it leaves its wait, with atomics only, so a task that blocks holds nothing and waits for nothing more
 * to do so, whatever CPU or task blocks beside it. A chain met for the first time claims an empty entry with one
 * compare-and-swap, writes its key and publishes it; a chain that finds the table full is counted in one entry,
 * "other", whose count and delay the profile shows as a sample of its own. Two tasks that meet one new chain at
 * the same moment may each claim an entry for it: the snapshot adds such twins together, so a reader sees each
 * chain once. */
#ifndef KERNEL_PROFILER_BLOCK_SITES_H
#define KERNEL_PROFILER_BLOCK_SITES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BLOCK_SITES 256      /* distinct chains the table keeps; more are "other" */
#define BLOCK_SITE_FRAMES 4  /* the call site and three of its callers: enough to tell one wait's caller */

/* One chain's entry. state goes EMPTY -> CLAIMED (its key being written) -> READY (key fixed; counts add up). */
enum block_site_state { BLOCK_SITE_EMPTY, BLOCK_SITE_CLAIMED, BLOCK_SITE_READY };

struct block_site {
    _Atomic uint32_t state;
    uint8_t nframes;
    uint8_t waiting_on;         /* enum task_wait */
    uint64_t hash;              /* of the key, compared before the frames */
    uintptr_t frames[BLOCK_SITE_FRAMES]; /* return addresses, the call site first */
    _Atomic uint64_t count;     /* waits that ended */
    _Atomic uint64_t delay_ns;  /* the time they waited, summed */
};

struct block_table {
    struct block_site sites[BLOCK_SITES];
    _Atomic uint64_t other_count;    /* waits of chains that found the table full */
    _Atomic uint64_t other_delay_ns;
};

/* One chain as a reader sees it: a copy, counts as of the snapshot. */
struct block_row {
    uintptr_t frames[BLOCK_SITE_FRAMES];
    uint8_t nframes;
    uint8_t waiting_on;
    uint64_t count;
    uint64_t delay_ns;
};

/* Any context (atomics only; no lock, no allocation): one wait of delay_ns (clamped at 0) that began at the
 * chain frames[0..n) (n clamped to BLOCK_SITE_FRAMES) waiting on waiting_on. */
void block_table_add(struct block_table *t, const uintptr_t *frames, unsigned n, uint8_t waiting_on,
                     int64_t delay_ns);
/* Task context: every published chain of t copied into out (at most max rows; twins added together), and the
 * "other" waits into *other (nframes 0). Returns the rows written. Counts keep growing while it reads: each
 * row's count and delay are each what they were at some moment of the read. */
unsigned block_table_snapshot(struct block_table *t, struct block_row *out, unsigned max, struct block_row *other);

/* The kernel's one table, which kernel/task.c adds every wait to. */
extern struct block_table block_sites;

#endif
