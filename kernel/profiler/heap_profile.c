/* kernel/profiler/heap_profile.c: the heap profile (kernel/profiler/heap_profile.h) -- the snapshot of the heap's
 * chains, sorted by what they hold, and its three forms: pprof, Go's legacy text, and `mem sites`. */
#include "kernel/profiler/heap_profile.h"

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"

#define STRINGS_FIXED 32 /* types, units, the named locations, comments */

/* More first: live bytes, then live objects, then bytes ever allocated. */
static bool holds_more(const struct heap_site *a, const struct heap_site *b)
{
    if (heap_site_live_bytes(a) != heap_site_live_bytes(b))
        return heap_site_live_bytes(a) > heap_site_live_bytes(b);
    if (heap_site_live_objects(a) != heap_site_live_objects(b))
        return heap_site_live_objects(a) > heap_site_live_objects(b);
    return a->alloc_bytes > b->alloc_bytes;
}

/* Shell sort: a few hundred rows, in place, no allocation. */
static void sort_rows(struct heap_site *rows, unsigned n)
{
    static const unsigned gaps[] = { 301, 132, 57, 23, 10, 4, 1 };
    for (unsigned g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        unsigned gap = gaps[g];
        for (unsigned i = gap; i < n; i++) {
            struct heap_site row = rows[i];
            unsigned j = i;
            for (; j >= gap && holds_more(&row, &rows[j - gap]); j -= gap)
                rows[j] = rows[j - gap];
            rows[j] = row;
        }
    }
}

bool heap_snapshot_take(struct heap_snapshot *s)
{
    s->count = 0;
    s->rows = kmalloc(HEAP_SITES_MAX * sizeof *s->rows);
    if (!s->rows)
        return false;
    s->taken_ns = time_ns();
    s->count = heap_sites_snapshot(s->rows, HEAP_SITES_MAX, &s->other);
    sort_rows(s->rows, s->count);
    return true;
}

void heap_snapshot_free(struct heap_snapshot *s)
{
    kfree(s->rows);
    s->rows = 0;
    s->count = 0;
}

static void totals(const struct heap_snapshot *s, struct heap_site *sum)
{
    *sum = s->other;
    for (unsigned i = 0; i < s->count; i++) {
        sum->allocs += s->rows[i].allocs;
        sum->alloc_bytes += s->rows[i].alloc_bytes;
        sum->frees += s->rows[i].frees;
        sum->free_bytes += s->rows[i].free_bytes;
    }
}

/* ---- pprof ----------------------------------------------------------------------------------------------- */

static void write_row(struct pprof_builder *b, const struct heap_site *r, const char *no_frames)
{
    uint64_t locs[HEAP_SITE_FRAMES];
    unsigned n = 0;
    if (r->nframes == 0)
        locs[n++] = pprof_named_location(b, no_frames);
    for (; n < r->nframes; n++)
        locs[n] = pprof_location(b, r->frames[n], false); /* return addresses, the call site first */
    uint64_t values[4] = { r->allocs, r->alloc_bytes, heap_site_live_objects(r), heap_site_live_bytes(r) };
    pprof_sample_end(b, pprof_sample_begin(b, locs, n, values, 4));
}

bool heap_profile_encode(const struct heap_snapshot *s, enum heap_profile_kind kind, const struct symtab *tab,
                         const struct pprof_mapping *mapping, uint8_t **data, size_t *len)
{
    struct pprof_builder b;
    *data = NULL;
    *len = 0;
    if (!pprof_builder_init(&b, tab, (s->count + 1) * HEAP_SITE_FRAMES + 2,
                            STRINGS_FIXED + s->count * HEAP_SITE_FRAMES))
        return false;
    pprof_write_header(&b, &(struct pprof_header){
        .sample_types = { { "alloc_objects", "count" }, { "alloc_space", "bytes" }, { "inuse_objects", "count" },
                          { "inuse_space", "bytes" } },
        .ntypes = 4,
        .period_type = { "space", "bytes" },
        .period = 1, /* every allocation counted: nothing to scale */
        .default_type = kind == HEAP_PROFILE_ALLOCS ? "alloc_space" : "inuse_space",
        .mapping = *mapping,
    });
    struct heap_site sum;
    totals(s, &sum);
    pprof_comment(&b, "kprof kernel: heap: every allocation since boot by call chain (not sampled); inuse is "
                      "what is allocated and not yet freed");
    pprof_comment(&b, "kprof kernel: chains=%u of %u, other=%llu allocations (chains past a full table), "
                      "inuse=%llu bytes in %llu objects", s->count, HEAP_SITES_MAX,
                  (unsigned long long)s->other.allocs, (unsigned long long)heap_site_live_bytes(&sum),
                  (unsigned long long)heap_site_live_objects(&sum));
    pprof_comment(&b, "kprof kernel: build_id=%s", mapping->build_id[0] ? mapping->build_id : "none");
    for (unsigned i = 0; i < s->count; i++)
        write_row(&b, &s->rows[i], HEAP_PROFILE_NO_FRAMES);
    if (s->other.allocs)
        write_row(&b, &s->other, HEAP_PROFILE_OTHER);
    return pprof_builder_finish(&b, data, len);
}

/* ---- text ------------------------------------------------------------------------------------------------ */

static void text_row(struct sink *out, const struct heap_site *r, const struct symtab *tab)
{
    sink_printf(out, "%llu: %llu [%llu: %llu] @", (unsigned long long)heap_site_live_objects(r),
                (unsigned long long)heap_site_live_bytes(r), (unsigned long long)r->allocs,
                (unsigned long long)r->alloc_bytes);
    for (unsigned i = 0; i < r->nframes; i++)
        sink_printf(out, " 0x%llx", (unsigned long long)r->frames[i]);
    sink_puts(out, "\n");
    for (unsigned i = 0; i < r->nframes; i++)
        symbol_print_go_frame(out, tab, r->frames[i], false);
    sink_puts(out, "\n");
}

void heap_profile_text(struct sink *out, const struct heap_snapshot *s, const struct symtab *tab)
{
    struct heap_site sum;
    totals(s, &sum);
    /* heap/1: every allocation counted, so a reader scales nothing */
    sink_printf(out, "heap profile: %llu: %llu [%llu: %llu] @ heap/1\n",
                (unsigned long long)heap_site_live_objects(&sum), (unsigned long long)heap_site_live_bytes(&sum),
                (unsigned long long)sum.allocs, (unsigned long long)sum.alloc_bytes);
    for (unsigned i = 0; i < s->count; i++)
        text_row(out, &s->rows[i], tab);
    if (s->other.allocs)
        text_row(out, &s->other, tab);
}

/* ---- mem sites ------------------------------------------------------------------------------------------- */

void heap_sites_report(struct sink *out, const struct heap_snapshot *s, unsigned top, const struct symtab *tab)
{
    struct heap_site sum;
    totals(s, &sum);
    sink_printf(out, "heap: %u chains hold %llu bytes in %llu objects; since boot %llu allocations, %llu frees",
                s->count, (unsigned long long)heap_site_live_bytes(&sum),
                (unsigned long long)heap_site_live_objects(&sum), (unsigned long long)sum.allocs,
                (unsigned long long)sum.frees);
    if (s->other.allocs)
        sink_printf(out, "; %llu allocations from chains past a full table of %u",
                    (unsigned long long)s->other.allocs, HEAP_SITES_MAX);
    sink_puts(out, "\n");
    sink_printf(out, "%12s %8s %8s %8s  %s\n", "live bytes", "objects", "allocs", "frees", "chain (call site first)");
    unsigned shown = 0;
    for (unsigned i = 0; i < s->count && shown < top; i++) {
        const struct heap_site *r = &s->rows[i];
        if (!heap_site_live_objects(r))
            break; /* sorted: the rest hold nothing */
        sink_printf(out, "%12llu %8llu %8llu %8llu  ", (unsigned long long)heap_site_live_bytes(r),
                    (unsigned long long)heap_site_live_objects(r), (unsigned long long)r->allocs,
                    (unsigned long long)r->frees);
        if (!r->nframes)
            sink_puts(out, HEAP_PROFILE_NO_FRAMES);
        for (unsigned f = 0; f < r->nframes; f++) {
            if (f)
                sink_puts(out, " <- ");
            symbol_print_return(out, tab, r->frames[f]);
        }
        sink_puts(out, "\n");
        shown++;
    }
    if (heap_site_live_objects(&s->other))
        sink_printf(out, "%12llu %8llu %8llu %8llu  %s\n", (unsigned long long)heap_site_live_bytes(&s->other),
                    (unsigned long long)heap_site_live_objects(&s->other), (unsigned long long)s->other.allocs,
                    (unsigned long long)s->other.frees, HEAP_PROFILE_OTHER);
}
