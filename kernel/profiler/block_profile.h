/* kernel/profiler/block_profile.h: the block profile -- where tasks blocked and for how long, from the block
 * table (kernel/profiler/block_sites.h), as Go's /debug/pprof/block serves its own (kernel/profiler/block_profile.c): a
 * snapshot of the table since boot, or the difference of two snapshots taken some seconds apart, encoded through
 * the pprof builder with sample types contentions/count (waits that ended) and delay/nanoseconds (their length,
 * from the wait's start to the task running again), one sample per chain -- the call site of the blocking call
 * and its callers, return addresses all -- labelled `waiting_on` with what the wait was on; the waits of chains
 * the table had no room for are one sample of a location of their own, "[other]". Task context. */
#ifndef KERNEL_PROFILER_BLOCK_PROFILE_H
#define KERNEL_PROFILER_BLOCK_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/block_sites.h"
#include "kernel/profiler/pprof_builder.h"

#define BLOCK_PROFILE_OTHER "[other]"
#define BLOCK_PROFILE_NO_FRAMES "[no frames]"

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

/* The snapshot as a pprof profile into *data (kfree gives it back), *len bytes, uncompressed; duration_ns is
 * what it covers (since boot, or between two snapshots). False (nothing allocated) when the heap says no. */
bool block_profile_encode(const struct block_snapshot *s, uint64_t duration_ns, const struct symtab *tab,
                          const struct pprof_mapping *mapping, uint8_t **data, size_t *len);

#endif
