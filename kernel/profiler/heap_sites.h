/* kernel/profiler/heap_sites.h: who holds the kernel heap -- every allocation's call chain and its counts, by
 * chain (kernel/profiler/heap_sites.c), for `mem sites`, /debug/pprof/heap and /debug/pprof/allocs and gdb's
 * `prof heap` (kernel/profiler/heap_profile.h). The heap (kernel/heap.c) walks the chain of each kmalloc's
 * caller, finds its site here under its own lock and keeps the site's number in the block's header, so the block's
 * kfree takes its bytes back from the same site: what a chain holds is its allocations less its frees, exactly.
 *
 * Every allocation is counted, not a sample of them as Go's heap profile takes: the kernel's allocation rate is low
 * (buffers and tasks, not every object), and a leak hunt wants the live set exact rather than estimated; the cost
 * per allocation is in `make bench`. The table is fixed (HEAP_SITES chains, in the kernel's image); chains past
 * HEAP_SITES_MAX are counted in one entry, "other", number 0, which the profile shows as a sample of its own.
 *
 * Not thread-safe by itself: the heap updates and copies it under the heap's lock. */
#ifndef KERNEL_PROFILER_HEAP_SITES_H
#define KERNEL_PROFILER_HEAP_SITES_H

#include <stdbool.h>
#include <stdint.h>

#define HEAP_SITE_FRAMES 8      /* the allocation's call site and seven of its callers */
#define HEAP_SITES 1024         /* slots of the table, a power of two (linear probing) */
#define HEAP_SITES_MAX 768      /* chains it takes before they go to "other": probes stay short */
#define HEAP_SITE_OTHER 0       /* the site number of every chain past a full table */

/* One chain and what it allocated and freed since boot; what it holds is the difference. */
struct heap_site {
    uint64_t hash;                        /* of the frames; 0 on an empty slot */
    uintptr_t frames[HEAP_SITE_FRAMES];   /* return addresses, the call site first */
    uint8_t nframes;
    uint64_t allocs, alloc_bytes;         /* allocations made from this chain, and their requested bytes */
    uint64_t frees, free_bytes;           /* those of them freed since */
};

struct heap_sites {
    struct heap_site slot[HEAP_SITES];    /* slot i is site number i + 1 */
    struct heap_site other;               /* site number 0 */
    unsigned chains;                      /* slots in use */
};

/* Empties the table. */
void heap_sites_reset(struct heap_sites *t);

/* The site number of the chain frames[0..n) (n clamped to HEAP_SITE_FRAMES), taking a slot for a new chain;
 * HEAP_SITE_OTHER once HEAP_SITES_MAX chains are in. An empty chain (n 0: no task's stack to walk, as at boot)
 * is a chain of its own. */
uint16_t heap_sites_find(struct heap_sites *t, const uintptr_t *frames, unsigned n);

/* One allocation of bytes from site, and one free of bytes from it. A number the table never gave counts in
 * "other". */
void heap_sites_alloc(struct heap_sites *t, uint16_t site, uint64_t bytes);
void heap_sites_free(struct heap_sites *t, uint16_t site, uint64_t bytes);

/* Copies every chain that ever allocated into out (at most max), then "other" into *other, with one block of
 * pending_bytes (none when 0) from site pending counted as freed already: the copy's own buffer, which its
 * reader frees and which is no one's live memory. Returns the chains written. */
unsigned heap_sites_copy(const struct heap_sites *t, struct heap_site *out, unsigned max, struct heap_site *other,
                         uint16_t pending, uint64_t pending_bytes);

/* What a site holds now: objects and bytes allocated and not yet freed. */
static inline uint64_t heap_site_live_objects(const struct heap_site *s) { return s->allocs - s->frees; }
static inline uint64_t heap_site_live_bytes(const struct heap_site *s) { return s->alloc_bytes - s->free_bytes; }

#endif
