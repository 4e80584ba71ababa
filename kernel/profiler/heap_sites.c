/* kernel/profiler/heap_sites.c: the table of allocation chains (kernel/profiler/heap_sites.h) -- an open-addressed
 * hash of chains with each one's allocation and free counts. The heap calls it under its lock. */
#include "kernel/profiler/heap_sites.h"

#include "kernel/lib/string.h"

void heap_sites_reset(struct heap_sites *t)
{
    memset(t, 0, sizeof *t);
}

/* FNV-1a over the frames and their count, never 0 (0 marks an empty slot). */
static uint64_t chain_hash(const uintptr_t *frames, unsigned n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= frames[i];
        h *= 0x100000001b3ull;
    }
    return h ? h : 1;
}

static bool same_chain(const struct heap_site *s, uint64_t hash, const uintptr_t *frames, unsigned n)
{
    if (s->hash != hash || s->nframes != n)
        return false;
    for (unsigned i = 0; i < n; i++)
        if (s->frames[i] != frames[i])
            return false;
    return true;
}

uint16_t heap_sites_find(struct heap_sites *t, const uintptr_t *frames, unsigned n)
{
    if (n > HEAP_SITE_FRAMES)
        n = HEAP_SITE_FRAMES;
    uint64_t hash = chain_hash(frames, n);
    for (unsigned probe = 0; probe < HEAP_SITES; probe++) {
        unsigned i = (unsigned)(hash + probe) & (HEAP_SITES - 1);
        struct heap_site *s = &t->slot[i];
        if (s->hash == 0) {
            if (t->chains >= HEAP_SITES_MAX)
                return HEAP_SITE_OTHER;
            s->hash = hash;
            s->nframes = (uint8_t)n;
            for (unsigned f = 0; f < n; f++)
                s->frames[f] = frames[f];
            t->chains++;
            return (uint16_t)(i + 1);
        }
        if (same_chain(s, hash, frames, n))
            return (uint16_t)(i + 1);
    }
    return HEAP_SITE_OTHER; /* not reached: the table is never more than HEAP_SITES_MAX full */
}

static struct heap_site *site_of(struct heap_sites *t, uint16_t site)
{
    if (site == HEAP_SITE_OTHER || site > HEAP_SITES || t->slot[site - 1].hash == 0)
        return &t->other;
    return &t->slot[site - 1];
}

void heap_sites_alloc(struct heap_sites *t, uint16_t site, uint64_t bytes)
{
    struct heap_site *s = site_of(t, site);
    s->allocs++;
    s->alloc_bytes += bytes;
}

void heap_sites_free(struct heap_sites *t, uint16_t site, uint64_t bytes)
{
    struct heap_site *s = site_of(t, site);
    s->frees++;
    s->free_bytes += bytes;
}

unsigned heap_sites_copy(const struct heap_sites *t, struct heap_site *out, unsigned max, struct heap_site *other,
                         uint16_t pending, uint64_t pending_bytes)
{
    unsigned n = 0;
    *other = t->other;
    struct heap_site *pending_copy = other;
    for (unsigned i = 0; i < HEAP_SITES && n < max; i++) {
        if (t->slot[i].hash == 0 || t->slot[i].allocs == 0)
            continue;
        if (pending == i + 1)
            pending_copy = &out[n];
        out[n++] = t->slot[i];
    }
    if (pending_bytes && pending_copy->frees < pending_copy->allocs) {
        pending_copy->frees++;
        pending_copy->free_bytes += pending_bytes;
    }
    return n;
}
