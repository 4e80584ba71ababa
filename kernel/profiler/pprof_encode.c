/* kernel/profiler/pprof_encode.c: the pprof encoder (kernel/profiler/pprof_encode.h). One pass over the fold
 * writes each sample, and before it each location and function it is the first to name, into the profile
 * (protobuf lets repeated fields interleave); the strings go into a second buffer as they are first met, each
 * already a string_table field, appended last, so index 0 is "" and no string is written twice. The lookups
 * -- string, location, function -- are open-addressed tables sized from the fold before anything is written,
 * so nothing grows but the two output buffers. */
#include "kernel/profiler/pprof_encode.h"

#include "kernel/heap.h"
#include "kernel/lib/gzip.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"
#include "kernel/profiler/pb_writer.h"
#include "kernel/profiler_ring.h"

/* profile.proto's field numbers (Profile, ValueType, Sample, Label, Mapping, Location, Line, Function). */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
    MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
};

#define KERNEL_MAPPING_ID 1
#define STRINGS_FIXED 64 /* the strings any profile has (types, units, label keys, marks, comments) */
#define STRINGS_PER_ENTRY (PROFILE_MAX_FRAMES + 2 * LABEL_MAX_PAIRS + 3) /* functions, pairs, span, cpu, pid */

/* ---- an open-addressed table of u64 keys to ids (1..), sized once -------------------------------------- */

struct id_slot {
    uint64_t key;
    uint32_t id; /* 0: empty */
};

struct id_table {
    struct id_slot *slots;
    uint32_t mask;
};

static uint32_t hash64(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Room for n keys at most half full. */
static bool id_table_init(struct id_table *t, uint32_t n)
{
    uint32_t size = 16;
    while (size < 2 * n)
        size *= 2;
    t->slots = kzalloc(size * sizeof *t->slots);
    t->mask = size - 1;
    return t->slots != NULL;
}

/* The slot holding key, or the empty one where it goes. */
static struct id_slot *id_table_find(struct id_table *t, uint64_t key)
{
    for (uint32_t i = hash64(key) & t->mask;; i = (i + 1) & t->mask)
        if (t->slots[i].id == 0 || t->slots[i].key == key)
            return &t->slots[i];
}

/* ---- the string table ---------------------------------------------------------------------------------- */

struct string_ref {
    uint32_t offset; /* of the bytes in the strings buffer */
    uint32_t len;
};

struct encoder {
    const struct pprof_fold *fold;
    const struct pprof_run_info *info;
    const struct symtab *tab;
    struct pb_buf out;     /* the profile, less its string table */
    struct pb_buf strings; /* string_table fields, in index order */
    struct string_ref *refs;
    uint32_t nstrings, max_strings;
    uint32_t *string_slots; /* index + 1; 0 empty */
    uint32_t string_mask;
    struct id_table locations; /* key: address << 1 | leaf (kernel addresses below 2^63) */
    struct id_table functions; /* key: symbol start */
    uint32_t nlocations, nfunctions;
    bool full; /* a table bound was wrong: give up rather than overrun */
};

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* The string table index of s[0..len), added when new. */
static uint32_t intern_n(struct encoder *e, const char *s, size_t len)
{
    uint32_t i = hash_bytes(s, len) & e->string_mask;
    for (;; i = (i + 1) & e->string_mask) {
        uint32_t n = e->string_slots[i];
        if (n == 0)
            break;
        const struct string_ref *r = &e->refs[n - 1];
        if (!e->strings.failed && r->len == len && memcmp(e->strings.data + r->offset, s, len) == 0)
            return n - 1;
    }
    if (e->nstrings == e->max_strings) {
        e->full = true;
        return 0;
    }
    pb_put_key(&e->strings, PROFILE_STRING_TABLE, PB_WIRE_LEN);
    pb_put_varint(&e->strings, len);
    e->refs[e->nstrings] = (struct string_ref){ (uint32_t)e->strings.len, (uint32_t)len };
    pb_put_bytes(&e->strings, s, len);
    e->string_slots[i] = ++e->nstrings;
    return e->nstrings - 1;
}

static uint32_t intern(struct encoder *e, const char *s)
{
    return intern_n(e, s, strlen(s));
}

static uint32_t intern_u64(struct encoder *e, uint64_t v)
{
    char text[24];
    ksnprintf(text, sizeof text, "%llu", (unsigned long long)v);
    return intern(e, text);
}

/* ---- locations and functions ----------------------------------------------------------------------------- */

/* The function of the symbol at start named name, written when first met. */
static uint32_t function_id(struct encoder *e, uint64_t start, const char *name)
{
    struct id_slot *slot = id_table_find(&e->functions, start);
    if (slot->id)
        return slot->id;
    if (e->nfunctions > e->functions.mask / 2) {
        e->full = true;
        return 0;
    }
    slot->key = start;
    slot->id = ++e->nfunctions;
    uint32_t s = intern(e, name);
    pb_mark m = pb_begin(&e->out, PROFILE_FUNCTION);
    pb_uint(&e->out, FUNCTION_ID, slot->id);
    pb_uint(&e->out, FUNCTION_NAME, s);
    pb_uint(&e->out, FUNCTION_SYSTEM_NAME, s);
    pb_end(&e->out, m);
    return slot->id;
}

/* The location of one frame, written when first met: the leaf's own address, a caller's return address (its
 * function found at address - 1, as the call before it). key_bit tells the two apart in the table. */
static uint32_t location_id(struct encoder *e, uint64_t addr, bool leaf)
{
    struct id_slot *slot = id_table_find(&e->locations, addr << 1 | leaf);
    if (slot->id)
        return slot->id;
    if (e->nlocations > e->locations.mask / 2) {
        e->full = true;
        return 0;
    }
    slot->key = addr << 1 | leaf;
    slot->id = ++e->nlocations;
    struct symbol_hit hit;
    bool resolved = leaf ? symtab_lookup(e->tab, addr, &hit) : symtab_lookup_return(e->tab, addr, &hit);
    uint32_t fid = resolved ? function_id(e, hit.start, hit.name) : 0;
    pb_mark m = pb_begin(&e->out, PROFILE_LOCATION);
    pb_uint(&e->out, LOCATION_ID, slot->id);
    if (addr >= e->info->memory_start && addr < e->info->memory_limit)
        pb_uint(&e->out, LOCATION_MAPPING_ID, KERNEL_MAPPING_ID);
    pb_uint(&e->out, LOCATION_ADDRESS, addr);
    if (fid) {
        pb_mark line = pb_begin(&e->out, LOCATION_LINE);
        pb_uint(&e->out, LINE_FUNCTION_ID, fid);
        pb_end(&e->out, line);
    }
    pb_end(&e->out, m);
    return slot->id;
}

/* ---- samples ------------------------------------------------------------------------------------------- */

static void label_str(struct encoder *e, uint32_t key, uint32_t str)
{
    pb_mark m = pb_begin(&e->out, SAMPLE_LABEL);
    pb_uint(&e->out, LABEL_KEY, key);
    pb_uint(&e->out, LABEL_STR, str);
    pb_end(&e->out, m);
}

/* The `context` words of a sample's marks, as the console report marks it: let-in alone, else irqs-off
 * and/or in-irq. */
static void context_labels(struct encoder *e, uint8_t flags, uint64_t held_off_us)
{
    uint32_t context = intern(e, "context");
    if (flags & PROFILE_REC_LET_IN) {
        label_str(e, context, intern(e, "let-in"));
        pb_mark m = pb_begin(&e->out, SAMPLE_LABEL);
        pb_uint(&e->out, LABEL_KEY, intern(e, "held_off_us"));
        pb_uint(&e->out, LABEL_NUM, held_off_us);
        pb_uint(&e->out, LABEL_NUM_UNIT, intern(e, "microseconds"));
        pb_end(&e->out, m);
        return;
    }
    if (flags & PROFILE_REC_IRQS_OFF)
        label_str(e, context, intern(e, "irqs-off"));
    if (flags & PROFILE_REC_IN_IRQ)
        label_str(e, context, intern(e, "in-irq"));
}

/* The set's pairs with span=N in its place among the keys (as the raw format writes it). */
static void set_labels(struct encoder *e, const struct label_set *set, uint64_t span)
{
    unsigned n = set ? set->npairs : 0;
    bool span_put = span == 0;
    for (unsigned i = 0; i <= n; i++) {
        const struct label_pair *p = i < n ? &set->pairs[i] : NULL;
        if (!span_put && (!p || strcmp(p->key, LABEL_SPAN_KEY) > 0)) {
            label_str(e, intern(e, LABEL_SPAN_KEY), intern_u64(e, span));
            span_put = true;
        }
        if (p)
            label_str(e, intern(e, p->key), intern(e, p->value));
    }
}

static void write_sample(struct encoder *e, const struct pprof_fold_entry *entry)
{
    uint64_t locs[PROFILE_MAX_FRAMES];
    for (unsigned i = 0; i < entry->nframes; i++)
        locs[i] = location_id(e, entry->frames[i], i == 0);
    uint64_t values[2] = { entry->count, entry->weight };
    pb_mark m = pb_begin(&e->out, PROFILE_SAMPLE);
    pb_packed(&e->out, SAMPLE_LOCATION_ID, locs, entry->nframes);
    pb_packed(&e->out, SAMPLE_VALUE, values, 2);
    set_labels(e, entry->labels, entry->span);
    context_labels(e, entry->flags, entry->held_off_us);
    /* strings, not numbers, as profexport writes them: pprof reads a numeric label of 0 without a unit as no
     * label at all, and cpu 0 is a CPU */
    label_str(e, intern(e, "cpu"), intern_u64(e, entry->cpu));
    label_str(e, intern(e, "pid"), intern_u64(e, entry->pid));
    pb_end(&e->out, m);
}

/* The samples that found the fold full: one sample of a location of their own, outside the mapping. */
static void write_not_tracked(struct encoder *e)
{
    uint32_t fid = ++e->nfunctions;
    uint32_t name = intern(e, PPROF_NOT_TRACKED);
    pb_mark m = pb_begin(&e->out, PROFILE_FUNCTION);
    pb_uint(&e->out, FUNCTION_ID, fid);
    pb_uint(&e->out, FUNCTION_NAME, name);
    pb_uint(&e->out, FUNCTION_SYSTEM_NAME, name);
    pb_end(&e->out, m);
    uint64_t lid = ++e->nlocations;
    m = pb_begin(&e->out, PROFILE_LOCATION);
    pb_uint(&e->out, LOCATION_ID, lid);
    pb_mark line = pb_begin(&e->out, LOCATION_LINE);
    pb_uint(&e->out, LINE_FUNCTION_ID, fid);
    pb_end(&e->out, line);
    pb_end(&e->out, m);
    uint64_t values[2] = { e->fold->not_tracked, e->fold->not_tracked_weight };
    m = pb_begin(&e->out, PROFILE_SAMPLE);
    pb_packed(&e->out, SAMPLE_LOCATION_ID, &lid, 1);
    pb_packed(&e->out, SAMPLE_VALUE, values, 2);
    pb_end(&e->out, m);
}

/* ---- the profile's own fields ------------------------------------------------------------------------- */

static void value_type(struct encoder *e, uint32_t field, uint32_t type, uint32_t unit)
{
    pb_mark m = pb_begin(&e->out, field);
    pb_uint(&e->out, VALUE_TYPE_TYPE, type);
    pb_uint(&e->out, VALUE_TYPE_UNIT, unit);
    pb_end(&e->out, m);
}

static void comment(struct encoder *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void comment(struct encoder *e, const char *fmt, ...)
{
    char text[256]; /* the longest, the first: a 63-character source and five 20-digit numbers fit */
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pb_uint(&e->out, PROFILE_COMMENT, intern(e, text));
}

static void write_header(struct encoder *e)
{
    const struct pprof_run_info *info = e->info;
    intern(e, ""); /* index 0, as profile.proto requires */
    uint32_t value = intern(e, info->cycles ? "cycles" : "cpu");
    uint32_t unit = intern(e, info->cycles ? "count" : "nanoseconds");
    value_type(e, PROFILE_SAMPLE_TYPE, intern(e, "samples"), intern(e, "count"));
    value_type(e, PROFILE_SAMPLE_TYPE, value, unit);
    value_type(e, PROFILE_PERIOD_TYPE, value, unit);
    pb_uint(&e->out, PROFILE_PERIOD, info->period);
    if (info->time_nanos)
        pb_uint(&e->out, PROFILE_TIME_NANOS, (uint64_t)info->time_nanos);
    pb_uint(&e->out, PROFILE_DURATION_NANOS, (uint64_t)info->window_ms * 1000000);
    pb_uint(&e->out, PROFILE_DEFAULT_SAMPLE_TYPE, value);

    pb_mark m = pb_begin(&e->out, PROFILE_MAPPING);
    pb_uint(&e->out, MAPPING_ID, KERNEL_MAPPING_ID);
    pb_uint(&e->out, MAPPING_MEMORY_START, info->memory_start);
    pb_uint(&e->out, MAPPING_MEMORY_LIMIT, info->memory_limit);
    pb_uint(&e->out, MAPPING_FILE_OFFSET, info->file_offset);
    pb_uint(&e->out, MAPPING_FILENAME, intern(e, "kprof.elf"));
    if (info->build_id[0])
        pb_uint(&e->out, MAPPING_BUILD_ID, intern(e, info->build_id));
    /* has_functions (and filenames, line numbers) stay false although the locations carry the baked names: pprof
     * re-symbolises only a mapping that says it is not, so `go tool pprof build/kprof.elf URL` replaces the
     * names with the ELF's functions and source lines, and without the ELF the names here stand. */
    pb_end(&e->out, m);

    /* As profexport's comments read: the source and period, the window, the drops; then what only the
     * kernel's fold can lose, and the build. */
    const struct pprof_fold *f = e->fold;
    char period[48];
    if (info->cycles)
        ksnprintf(period, sizeof period, "period=%llu unit=cycles", (unsigned long long)info->period);
    else
        ksnprintf(period, sizeof period, "period_ns=%llu", (unsigned long long)info->period);
    comment(e, "kprof kernel: source=%s %s window_ms=%u cpus=%u samples=%llu dropped=%llu", info->source, period,
            info->window_ms, info->ncpus, (unsigned long long)f->samples, (unsigned long long)info->ring_drops);
    comment(e, "kprof kernel: folded %u keys of %u, not_tracked=%llu (samples of keys past a full table)",
            f->used, PPROF_FOLD_ENTRIES, (unsigned long long)f->not_tracked);
    comment(e, "kprof kernel: labels_dropped=%llu (label sets the pool refused, full)",
            (unsigned long long)f->labels_dropped);
    comment(e, "kprof kernel: build_id=%s", info->build_id[0] ? info->build_id : "none");
}

bool pprof_encode(const struct pprof_fold *fold, const struct pprof_run_info *info, const struct symtab *tab,
                  uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    struct encoder e;
    memset(&e, 0, sizeof e);
    e.fold = fold;
    e.info = info;
    e.tab = tab;
    pb_init(&e.out, PPROF_ENCODE_LIMIT);
    pb_init(&e.strings, PPROF_ENCODE_LIMIT);
    uint32_t frames = fold->used * PROFILE_MAX_FRAMES + 1;
    e.max_strings = STRINGS_FIXED + fold->used * STRINGS_PER_ENTRY;
    uint32_t slots = 16;
    while (slots < 2 * e.max_strings)
        slots *= 2;
    e.string_mask = slots - 1;
    e.refs = kzalloc(e.max_strings * sizeof *e.refs);
    e.string_slots = kzalloc(slots * sizeof *e.string_slots);
    bool ok = e.refs && e.string_slots && id_table_init(&e.locations, frames + 1) &&
              id_table_init(&e.functions, frames + 1);
    if (ok) {
        write_header(&e);
        for (uint32_t i = 0; i < fold->used; i++)
            write_sample(&e, &fold->entries[i]);
        if (fold->not_tracked)
            write_not_tracked(&e);
        pb_put_bytes(&e.out, e.strings.data, e.strings.len);
        ok = !e.full && !e.out.failed && !e.strings.failed;
    }
    if (ok)
        *data = pb_take(&e.out, len);
    ok = ok && *data;
    pb_free(&e.out);
    pb_free(&e.strings);
    kfree(e.refs);
    kfree(e.string_slots);
    kfree(e.locations.slots);
    kfree(e.functions.slots);
    return ok;
}

bool pprof_gzip(uint8_t **data, size_t *len)
{
    void *work = kzalloc(GZIP_WORK_BYTES);
    uint8_t *gz = work ? kzalloc(gzip_bound(*len)) : NULL;
    size_t n = gz ? gzip_compress(*data, *len, gz, gzip_bound(*len), work) : 0;
    kfree(work);
    if (n == 0 || n >= *len) {
        kfree(gz);
        return false;
    }
    kfree(*data);
    *data = gz;
    *len = n;
    return true;
}
