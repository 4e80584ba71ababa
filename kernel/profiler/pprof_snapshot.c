/* kernel/profiler/pprof_snapshot.c: the profiles that are snapshots (kernel/profiler/pprof.h) -- every task now
 * (the task dump, as the goroutine profile or its text forms), where tasks blocked and where CPUs spun on
 * spinlocks (the block and lock tables, since boot or the difference of two snapshots, as pprof or text) and who
 * holds the heap (its chains' table), each copied, then encoded against the baked symbols with the kernel's
 * mapping. Task context; they claim no profiler, so they neither wait for a profile nor hold one up. */
#include "kernel/profiler/pprof.h"

#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler/block_profile.h"
#include "kernel/profiler/goroutine.h"
#include "kernel/profiler/heap_profile.h"
#include "kernel/profiler/lock_sites.h"
#include "kernel/profiler/task_dump.h"
#include "kernel/symbols.h"

/* A text form of the dump: a header line and every frame of every row, with room to spare for long names. */
#define TEXT_PER_ROW (256 + TASK_DUMP_MAX_FRAMES * 128)

static void empty(struct pprof_body *out)
{
    out->data = NULL;
    out->len = 0;
    out->gzipped = false;
}

/* A profile's bytes as the body, gzipped when that is smaller. */
static int body_of(bool encoded, uint8_t *data, size_t len, struct pprof_body *out)
{
    if (!encoded)
        return PPROF_NO_MEMORY;
    out->data = data;
    out->len = len;
    out->gzipped = pprof_gzip(&out->data, &out->len);
    return PPROF_OK;
}

/* The running kernel's mapping, with room for its build id in hex. */
struct kernel_mapping {
    struct pprof_mapping m;
    char build_id[2 * PROFILE_BUILD_ID_MAX + 1];
};

static const struct pprof_mapping *kernel_mapping(struct kernel_mapping *km)
{
    pprof_kernel_mapping(&km->m, km->build_id, sizeof km->build_id);
    return &km->m;
}

/* A text form's buffer of cap bytes as a sink: false when the heap has none. */
static bool text_begin(struct buffer_sink *bs, size_t cap)
{
    char *buf = kmalloc(cap);
    if (buf)
        buffer_sink_init(bs, buf, cap);
    return buf != NULL;
}

/* What the sink holds, as the body. */
static int text_body(struct buffer_sink *bs, struct pprof_body *out)
{
    out->data = (uint8_t *)bs->buf;
    out->len = bs->len;
    return PPROF_OK;
}

static int goroutine_text_body(const struct task_dump *d, int debug, struct pprof_body *out)
{
    struct buffer_sink bs;
    if (!text_begin(&bs, 512 + (size_t)d->count * TEXT_PER_ROW))
        return PPROF_NO_MEMORY;
    if (debug == 1 && !goroutine_text(&bs.sink, d, kernel_symtab())) {
        kfree(bs.buf);
        return PPROF_NO_MEMORY;
    }
    if (debug != 1)
        task_dump_print(&bs.sink, d);
    return text_body(&bs, out);
}

int pprof_goroutine(int debug, struct pprof_body *out)
{
    empty(out);
    struct task_dump d;
    if (!task_dump_take(&d))
        return PPROF_NO_MEMORY;
    int status;
    if (debug) {
        status = goroutine_text_body(&d, debug, out);
    } else {
        struct kernel_mapping km;
        uint8_t *data;
        size_t len;
        status = body_of(goroutine_encode(&d, kernel_symtab(), kernel_mapping(&km), &data, &len), data, len, out);
    }
    task_dump_free(&d);
    return status;
}

/* The table and the kind of each profile of a block table. */
static const struct {
    struct block_table *table;
    const struct block_profile_kind *kind;
} delays[] = {
    [PPROF_BLOCK] = { &block_sites, &block_profile_waits },
    [PPROF_MUTEX] = { &lock_sites, &block_profile_spins },
};

/* The text form: its three header lines, and a line of counts and one per frame for each row, with room to spare
 * for long names. */
#define DELAYS_TEXT_PER_ROW (64 + BLOCK_SITE_FRAMES * (24 + 128))

static int delays_text_body(struct block_snapshot *s, enum pprof_delays which, struct pprof_body *out)
{
    struct buffer_sink bs;
    if (!text_begin(&bs, 128 + (size_t)(s->count + 1) * DELAYS_TEXT_PER_ROW))
        return PPROF_NO_MEMORY;
    block_profile_text(&bs.sink, s, delays[which].kind, kernel_symtab());
    return text_body(&bs, out);
}

/* The snapshot, covering duration_ns, as the body: pprof, or text. */
static int delays_body(struct block_snapshot *s, enum pprof_delays which, bool text, uint64_t duration_ns,
                       struct pprof_body *out)
{
    if (text)
        return delays_text_body(s, which, out);
    struct kernel_mapping km;
    uint8_t *data;
    size_t len;
    return body_of(block_profile_encode(s, delays[which].kind, duration_ns, kernel_symtab(), kernel_mapping(&km),
                                        &data, &len),
                   data, len, out);
}

int pprof_delays(enum pprof_delays which, bool text, struct pprof_body *out)
{
    empty(out);
    struct block_snapshot now;
    if (!block_snapshot_take(delays[which].table, &now))
        return PPROF_NO_MEMORY;
    int status = delays_body(&now, which, text, (uint64_t)now.taken_ns, out); /* since boot: the clock starts there */
    block_snapshot_free(&now);
    return status;
}

int pprof_delays_begin(struct pprof_delays_window *w, enum pprof_delays which, bool text)
{
    w->which = which;
    w->text = text;
    return block_snapshot_take(delays[which].table, &w->earlier) ? PPROF_OK : PPROF_NO_MEMORY;
}

int pprof_delays_end(struct pprof_delays_window *w, bool cancelled, struct pprof_body *out)
{
    empty(out);
    int status = PPROF_CANCELLED;
    struct block_snapshot later;
    if (cancelled) {
        /* nothing to take: the first snapshot given back below */
    } else if (!block_snapshot_take(delays[w->which].table, &later)) {
        status = PPROF_NO_MEMORY;
    } else {
        block_snapshot_subtract(&later, &w->earlier);
        status = delays_body(&later, w->which, w->text, (uint64_t)(later.taken_ns - w->earlier.taken_ns), out);
        block_snapshot_free(&later);
    }
    block_snapshot_free(&w->earlier);
    return status;
}

/* Room for the text form: the total line and, per chain, its line and a line per frame. */
#define HEAP_TEXT_PER_ROW (96 + HEAP_SITE_FRAMES * (24 + 128))

int pprof_heap(bool allocs, int debug, struct pprof_body *out)
{
    empty(out);
    struct heap_snapshot s;
    if (!heap_snapshot_take(&s))
        return PPROF_NO_MEMORY;
    int status = PPROF_NO_MEMORY;
    struct buffer_sink bs;
    if (!debug) {
        struct kernel_mapping km;
        uint8_t *data;
        size_t len;
        status = body_of(heap_profile_encode(&s, allocs ? HEAP_PROFILE_ALLOCS : HEAP_PROFILE_INUSE, kernel_symtab(),
                                             kernel_mapping(&km), &data, &len),
                         data, len, out);
    } else if (text_begin(&bs, 128 + (size_t)(s.count + 1) * HEAP_TEXT_PER_ROW)) {
        heap_profile_text(&bs.sink, &s, kernel_symtab());
        status = text_body(&bs, out);
    }
    heap_snapshot_free(&s);
    return status;
}
