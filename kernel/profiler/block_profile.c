/* kernel/profiler/block_profile.c: the block profile (kernel/profiler/block_profile.h) -- snapshots of the block
 * table, their difference, and their encoding through the pprof builder. */
#include "kernel/profiler/block_profile.h"

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/task.h"

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

static void write_row(struct pprof_builder *b, const struct block_row *r, const char *no_frames)
{
    uint64_t locs[BLOCK_SITE_FRAMES];
    unsigned n = 0;
    if (r->nframes == 0)
        locs[n++] = pprof_named_location(b, no_frames);
    for (; n < r->nframes; n++)
        locs[n] = pprof_location(b, r->frames[n], false); /* return addresses, the call site first */
    uint64_t values[2] = { r->count, r->delay_ns };
    pb_mark m = pprof_sample_begin(b, locs, n, values, 2);
    if (r->nframes)
        pprof_label(b, "waiting_on", task_wait_name(r->waiting_on));
    pprof_sample_end(b, m);
}

bool block_profile_encode(const struct block_snapshot *s, uint64_t duration_ns, const struct symtab *tab,
                          const struct pprof_mapping *mapping, uint8_t **data, size_t *len)
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
    pprof_comment(&b, "kprof kernel: block: every wait of every task (sleeps included, waiting_on=sleep); "
                      "contentions are waits ended, delay their length to the task running again");
    pprof_comment(&b, "kprof kernel: chains=%u of %u, other=%llu waits (chains past a full table)", s->count,
                  BLOCK_SITES, (unsigned long long)s->other.count);
    pprof_comment(&b, "kprof kernel: build_id=%s", mapping->build_id[0] ? mapping->build_id : "none");
    for (unsigned i = 0; i < s->count; i++)
        write_row(&b, &s->rows[i], BLOCK_PROFILE_NO_FRAMES);
    if (s->other.count)
        write_row(&b, &s->other, BLOCK_PROFILE_OTHER);
    return pprof_builder_finish(&b, data, len);
}
