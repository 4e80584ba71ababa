/* kernel/profiler/block_profile.c: the profiles of a block table (kernel/profiler/block_profile.h) -- snapshots of
 * the table, their difference, their order, and their encoding through the pprof builder or as Go's text, for
 * the block table's waits and the lock table's spins alike: the two kinds differ only in their words and label. */
#include "kernel/profiler/block_profile.h"

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/task.h"

static const char *wait_name(uint8_t waiting_on) { return task_wait_name((enum task_wait)waiting_on); }

const struct block_profile_kind block_profile_waits = {
    .text_name = "contention",
    .counted = "kprof kernel: block: every wait of every task (sleeps included, waiting_on=sleep); "
               "contentions are waits ended, delay their length to the task running again",
    .label_key = "waiting_on",
    .label_value = wait_name,
};

const struct block_profile_kind block_profile_spins = {
    .text_name = "mutex",
    .counted = "kprof kernel: mutex: every spinlock acquisition that found the lock held; contentions are such "
               "acquisitions, delay the time each spun before it took the lock",
};

#define STRINGS_FIXED 48 /* types, units, the label key, the waits' names, the named locations, comments */

bool block_snapshot_take(struct block_table *table, struct block_snapshot *s)
{
    s->count = 0;
    s->rows = kzalloc(BLOCK_SITES * sizeof *s->rows);
    if (!s->rows)
        return false;
    s->taken_ns = time_ns();
    s->count = block_table_snapshot(table, s->rows, BLOCK_SITES, &s->other);
    return true;
}

void block_snapshot_free(struct block_snapshot *s)
{
    kfree(s->rows);
    s->rows = 0;
    s->count = 0;
}

static bool same_chain(const struct block_row *a, const struct block_row *b)
{
    if (a->nframes != b->nframes || a->waiting_on != b->waiting_on)
        return false;
    for (unsigned i = 0; i < a->nframes; i++)
        if (a->frames[i] != b->frames[i])
            return false;
    return true;
}

/* a less b, never below 0 (both only grow, but each count is read at its own moment). */
static void less(struct block_row *a, const struct block_row *b)
{
    a->count = a->count > b->count ? a->count - b->count : 0;
    a->delay_ns = a->delay_ns > b->delay_ns ? a->delay_ns - b->delay_ns : 0;
}

void block_snapshot_subtract(struct block_snapshot *later, const struct block_snapshot *earlier)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < later->count; i++) {
        struct block_row r = later->rows[i];
        for (unsigned j = 0; j < earlier->count; j++)
            if (same_chain(&r, &earlier->rows[j])) {
                less(&r, &earlier->rows[j]);
                break;
            }
        if (r.count)
            later->rows[kept++] = r;
    }
    later->count = kept;
    less(&later->other, &earlier->other);
}

/* More delay first, then more count: what `locks` and the text form put first. */
static bool before(const struct block_row *a, const struct block_row *b)
{
    return a->delay_ns != b->delay_ns ? a->delay_ns > b->delay_ns : a->count > b->count;
}

void block_snapshot_sort(struct block_snapshot *s)
{
    /* insertion sort: at most BLOCK_SITES rows, once a request */
    for (unsigned i = 1; i < s->count; i++) {
        struct block_row r = s->rows[i];
        unsigned j = i;
        for (; j > 0 && before(&r, &s->rows[j - 1]); j--)
            s->rows[j] = s->rows[j - 1];
        s->rows[j] = r;
    }
}

static void write_row(struct pprof_builder *b, const struct block_profile_kind *kind, const struct block_row *r,
                      const char *no_frames)
{
    uint64_t locs[BLOCK_SITE_FRAMES];
    unsigned n = 0;
    if (r->nframes == 0)
        locs[n++] = pprof_named_location(b, no_frames);
    for (; n < r->nframes; n++)
        locs[n] = pprof_location(b, r->frames[n], false); /* return addresses, the call site first */
    uint64_t values[2] = { r->count, r->delay_ns };
    pb_mark m = pprof_sample_begin(b, locs, n, values, 2);
    if (r->nframes && kind->label_key)
        pprof_label(b, kind->label_key, kind->label_value(r->waiting_on));
    pprof_sample_end(b, m);
}

bool block_profile_encode(const struct block_snapshot *s, const struct block_profile_kind *kind, uint64_t duration_ns,
                          const struct symtab *tab, const struct pprof_mapping *mapping, uint8_t **data,
                          size_t *len)
{
    struct pprof_builder b;
    *data = NULL;
    *len = 0;
    if (!pprof_builder_init(&b, tab, (s->count + 1) * BLOCK_SITE_FRAMES + 2,
                            STRINGS_FIXED + s->count * BLOCK_SITE_FRAMES))
        return false;
    pprof_write_header(&b, &(struct pprof_header){
        .sample_types = { { "contentions", "count" }, { "delay", "nanoseconds" } },
        .ntypes = 2,
        .period_type = { "contentions", "count" },
        .period = 1,
        .default_type = "delay",
        .duration_nanos = duration_ns,
        .mapping = *mapping,
    });
    pprof_comment(&b, "%s", kind->counted);
    pprof_comment(&b, "kprof kernel: chains=%u of %u, other=%llu contentions (chains past a full table)", s->count,
                  BLOCK_SITES, (unsigned long long)s->other.count);
    pprof_comment(&b, "kprof kernel: build_id=%s", mapping->build_id[0] ? mapping->build_id : "none");
    for (unsigned i = 0; i < s->count; i++)
        write_row(&b, kind, &s->rows[i], BLOCK_PROFILE_NO_FRAMES);
    if (s->other.count)
        write_row(&b, kind, &s->other, BLOCK_PROFILE_OTHER);
    return pprof_builder_finish(&b, data, len);
}

static void text_row(struct sink *out, const struct block_row *r, const struct symtab *tab)
{
    sink_printf(out, "%llu %llu @", (unsigned long long)r->delay_ns, (unsigned long long)r->count);
    for (unsigned i = 0; i < r->nframes; i++)
        sink_printf(out, " %#lx", (unsigned long)r->frames[i]);
    sink_puts(out, "\n");
    for (unsigned i = 0; i < r->nframes; i++)
        symbol_print_go_frame(out, tab, r->frames[i], false);
}

void block_profile_text(struct sink *out, struct block_snapshot *s, const struct block_profile_kind *kind,
                        const struct symtab *tab)
{
    block_snapshot_sort(s);
    sink_printf(out, "--- %s:\ncycles/second=1000000000\nsampling period=1\n", kind->text_name);
    for (unsigned i = 0; i < s->count; i++)
        text_row(out, &s->rows[i], tab);
    if (s->other.count)
        text_row(out, &s->other, tab);
}
