/* kernel/profiler/block_sites.c: the table of where tasks blocked (kernel/profiler/block_sites.h) -- an
 * open-addressed table of chains whose entries are claimed with a compare-and-swap and never given back (a chain
 * that blocked once is a place tasks block), counted with atomic adds. Pure, so the unit tests drive it with
 * their own tables and
 * threads. */
#include "kernel/profiler/block_sites.h"

struct block_table block_sites;

/* Multiplicative hashing over the key's words; never 0, so a zeroed entry's hash matches no key. */
static uint64_t key_hash(const uintptr_t *frames, unsigned n, uint8_t waiting_on)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio */
    uint64_t h = ((uint64_t)n | (uint64_t)waiting_on << 8) * k;
    for (unsigned i = 0; i < n; i++)
        h = (h ^ frames[i]) * k;
    return h | 1;
}

static bool key_is(const struct block_site *s, uint64_t hash, const uintptr_t *frames, unsigned n,
                   uint8_t waiting_on)
{
    if (s->hash != hash || s->nframes != n || s->waiting_on != waiting_on)
        return false;
    for (unsigned i = 0; i < n; i++)
        if (s->frames[i] != frames[i])
            return false;
    return true;
}

static void count(_Atomic uint64_t *waits, _Atomic uint64_t *total_ns, uint64_t delay_ns)
{
    atomic_fetch_add_explicit(waits, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(total_ns, delay_ns, memory_order_relaxed);
}

void block_table_add(struct block_table *t, const uintptr_t *frames, unsigned n, uint8_t waiting_on,
                     int64_t delay_ns)
{
    uint64_t delay = delay_ns > 0 ? (uint64_t)delay_ns : 0; /* one clock, a signed difference: never below 0 */
    if (n > BLOCK_SITE_FRAMES)
        n = BLOCK_SITE_FRAMES;
    uint64_t hash = key_hash(frames, n, waiting_on);
    uint32_t start = (uint32_t)(hash >> 32) % BLOCK_SITES;
    /* Every entry at most once: a full table costs BLOCK_SITES looks, then "other". */
    for (uint32_t probe = 0; probe < BLOCK_SITES; probe++) {
        struct block_site *s = &t->sites[(start + probe) % BLOCK_SITES];
        uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
        /* CLAIMED: another task is writing its key here. Not ours to wait for: a twin of this chain may end up
         * beside it (the snapshot adds twins together) rather than this task wait on another's write. */
        if (state == BLOCK_SITE_EMPTY) {
            if (!atomic_compare_exchange_strong_explicit(&s->state, &state, BLOCK_SITE_CLAIMED,
                                                         memory_order_acquire, memory_order_acquire)) {
                if (state != BLOCK_SITE_READY)
                    continue; /* claimed by another meanwhile */
                /* claimed and published meanwhile: it may be ours, below */
            } else {
                s->hash = hash;
                s->nframes = (uint8_t)n;
                s->waiting_on = waiting_on;
                for (unsigned i = 0; i < BLOCK_SITE_FRAMES; i++)
                    s->frames[i] = i < n ? frames[i] : 0;
                /* the key before READY: a reader that sees READY sees the whole key */
                atomic_store_explicit(&s->state, BLOCK_SITE_READY, memory_order_release);
                count(&s->count, &s->delay_ns, delay);
                return;
            }
        }
        if (state == BLOCK_SITE_READY && key_is(s, hash, frames, n, waiting_on)) {
            count(&s->count, &s->delay_ns, delay);
            return;
        }
    }
    count(&t->other_count, &t->other_delay_ns, delay);
}

static bool same_key(const struct block_row *r, const struct block_site *s)
{
    if (r->nframes != s->nframes || r->waiting_on != s->waiting_on)
        return false;
    for (unsigned i = 0; i < r->nframes; i++)
        if (r->frames[i] != s->frames[i])
            return false;
    return true;
}

unsigned block_table_snapshot(struct block_table *t, struct block_row *out, unsigned max, struct block_row *other)
{
    unsigned rows = 0;
    for (unsigned i = 0; i < BLOCK_SITES; i++) {
        struct block_site *s = &t->sites[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != BLOCK_SITE_READY)
            continue;
        uint64_t waits = atomic_load_explicit(&s->count, memory_order_relaxed);
        uint64_t delay = atomic_load_explicit(&s->delay_ns, memory_order_relaxed);
        struct block_row *r = 0;
        for (unsigned j = 0; j < rows && !r; j++)
            if (same_key(&out[j], s))
                r = &out[j];
        if (r) {
            r->count += waits;
            r->delay_ns += delay;
            continue;
        }
        if (rows == max)
            continue;
        r = &out[rows++];
        r->nframes = s->nframes;
        r->waiting_on = s->waiting_on;
        for (unsigned f = 0; f < BLOCK_SITE_FRAMES; f++)
            r->frames[f] = s->frames[f];
        r->count = waits;
        r->delay_ns = delay;
    }
    if (other) {
        *other = (struct block_row){ .nframes = 0 };
        other->count = atomic_load_explicit(&t->other_count, memory_order_relaxed);
        other->delay_ns = atomic_load_explicit(&t->other_delay_ns, memory_order_relaxed);
    }
    return rows;
}
