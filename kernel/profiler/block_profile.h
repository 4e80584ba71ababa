/* kernel/profiler/block_profile.h: the profiles of a block table (kernel/profiler/block_sites.h) -- where tasks
 * blocked (the block table, as Go's /debug/pprof/block serves its own) and where CPUs spun on spinlocks (the lock
 * table, kernel/profiler/lock_sites.h, as Go's /debug/pprof/mutex) -- from kernel/profiler/block_profile.c: a
 * snapshot of the table since boot, or the difference of two snapshots taken some seconds apart, encoded through
 * the pprof builder with sample types contentions/count (waits that ended) and delay/nanoseconds (their length),
 * one sample per chain -- the call site and its callers, return addresses all -- labelled as the profile's kind
 * says (the block profile `waiting_on`, with what the wait was on; the lock profile nothing); the waits of chains
 * the table had no room for are one sample of a location of their own, "[other]". Or as Go's debug=1 text of a
 * contention profile. The kind (struct block_profile_kind) is all that differs between the two. Task context. */
#ifndef KERNEL_PROFILER_BLOCK_PROFILE_H
#define KERNEL_PROFILER_BLOCK_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/block_sites.h"
#include "kernel/profiler/pprof_builder.h"

struct sink;

#define BLOCK_PROFILE_OTHER "[other]"
#define BLOCK_PROFILE_NO_FRAMES "[no frames]"

/* What tells the profiles of two block tables apart. */
struct block_profile_kind {
    const char *text_name;  /* Go's debug=1 header, "--- NAME:": "contention" (block), "mutex" */
    const char *counted;    /* the first comment: what a contention is and what its delay measures */
    const char *label_key;  /* the label every chain's sample carries, with label_value(waiting_on); NULL: none */
    const char *(*label_value)(uint8_t waiting_on);
};

/* The two kinds: the block table's waits (label waiting_on) and the lock table's spins (no label). */
extern const struct block_profile_kind block_profile_waits, block_profile_spins;

struct block_snapshot {
    struct block_row *rows; /* on the heap, BLOCK_SITES of room */
    unsigned count;
    struct block_row other;
    int64_t taken_ns;       /* when (time_ns) */
};

/* Task context: table's chains now into s (block_snapshot_free gives the rows back); false when the heap has no
 * room for them. */
bool block_snapshot_take(struct block_table *table, struct block_snapshot *s);
void block_snapshot_free(struct block_snapshot *s);
/* later less earlier, chain by chain (a chain only later has is kept whole; one with no wait between the two is
 * dropped): what blocked between the two snapshots. */
void block_snapshot_subtract(struct block_snapshot *later, const struct block_snapshot *earlier);

/* The rows most delay first (the most count first among equal delays): the order `locks` and the text form
 * print them in. */
void block_snapshot_sort(struct block_snapshot *s);

/* The snapshot, a profile of kind, as a pprof profile into *data (kfree gives it back), *len bytes,
 * uncompressed; duration_ns is what it covers (since boot, or between two snapshots). False (nothing allocated)
 * when the heap says no. */
bool block_profile_encode(const struct block_snapshot *s, const struct block_profile_kind *kind, uint64_t duration_ns,
                          const struct symtab *tab, const struct pprof_mapping *mapping, uint8_t **data,
                          size_t *len);

/* The snapshot as Go's debug=1 text of a contention profile, sorted (block_snapshot_sort) -- "--- NAME:",
 * cycles/second=1000000000 (a delay is in nanoseconds, which the reader takes for cycles at 1 GHz), "sampling
 * period=1", then per chain "DELAY COUNT @ ADDR..." and a line per frame, "#", a tab, its address, a tab,
 * "function+0xOFF" resolved through tab; the "[other]" waits last, with no frames. */
void block_profile_text(struct sink *out, struct block_snapshot *s, const struct block_profile_kind *kind,
                        const struct symtab *tab);

#endif
