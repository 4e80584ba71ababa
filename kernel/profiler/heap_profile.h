/* kernel/profiler/heap_profile.h: the heap profile -- who holds the kernel heap, by allocation chain, from the
 * heap's table of chains (kernel/profiler/heap_sites.h) -- as Go serves its own: pprof with Go's four sample types
 * (alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes) for /debug/pprof/heap (inuse
 * first) and /debug/pprof/allocs (alloc_space first), Go's legacy text form for ?debug=1, and `mem sites`, the
 * chains holding the most. Every allocation is counted (no sampling), so the values are exact and the period 1.
 * Task context (kernel/profiler/heap_profile.c). */
#ifndef KERNEL_PROFILER_HEAP_PROFILE_H
#define KERNEL_PROFILER_HEAP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/heap_sites.h"
#include "kernel/profiler/pprof_builder.h"

#define HEAP_PROFILE_OTHER "[other]"         /* chains past a full table */
#define HEAP_PROFILE_NO_FRAMES "[boot]"      /* allocations with no task's stack to walk: before the first task */
#define HEAP_SITES_SHOWN 10                  /* `mem sites` without N */

struct heap_snapshot {
    struct heap_site *rows; /* on the heap, HEAP_SITES_MAX of room; live bytes, most first */
    unsigned count;
    struct heap_site other;
    int64_t taken_ns;
};

/* The heap's chains now into s, sorted by the bytes they hold (then objects), the snapshot's own buffer not
 * counted (heap_sites_snapshot); false when the heap has no room for the copy. heap_snapshot_free gives it back. */
bool heap_snapshot_take(struct heap_snapshot *s);
void heap_snapshot_free(struct heap_snapshot *s);

/* Which sample type a reader sees first: /debug/pprof/heap's inuse_space or /debug/pprof/allocs' alloc_space. */
enum heap_profile_kind { HEAP_PROFILE_INUSE, HEAP_PROFILE_ALLOCS };

/* The snapshot as pprof into *data (kfree gives it back), *len bytes, uncompressed: one sample per chain with its
 * four values, return addresses the call site first. False (nothing allocated) when the heap says no. */
bool heap_profile_encode(const struct heap_snapshot *s, enum heap_profile_kind kind, const struct symtab *tab,
                         const struct pprof_mapping *mapping, uint8_t **data, size_t *len);

struct sink;
/* Go's legacy text heap profile (?debug=1): a total line, then per chain `inuse_objects: inuse_bytes
 * [alloc_objects: alloc_bytes] @ addresses` and one `#` line per frame, symbolized. */
void heap_profile_text(struct sink *out, const struct heap_snapshot *s, const struct symtab *tab);

/* `mem sites [N]`: the totals, then the top chains (at most top) by the bytes they hold, with objects, bytes,
 * allocations and frees, each chain on one line, symbolized. */
void heap_sites_report(struct sink *out, const struct heap_snapshot *s, unsigned top, const struct symtab *tab);

#endif
