/* kernel/profiler/pprof_builder.c: the pprof profile builder (kernel/profiler/pprof_builder.h). Each sample is
 * written in one pass, and before it each location and function it is the first to name (protobuf lets
 * repeated fields interleave); the strings go into a second buffer as they are first met, each already a
 * string_table field, appended last, so index 0 is "" and no string is written twice. The lookups -- string,
 * location, function -- are open-addressed tables sized before anything is written. */
#include "kernel/profiler/pprof_builder.h"

#include <stdarg.h>

#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/lib/gzip.h"
#include "kernel/lib/string.h"

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
/* A named location's key in the location table: above every address (kernel text is far below 2^62), by the
 * index of its name. */
#define NAMED_KEY (1ull << 63)

/* ---- an open-addressed table of u64 keys to ids (1..), sized once -------------------------------------- */

static uint32_t hash64(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Room for n keys at most half full. */
static bool id_table_init(struct pprof_id_table *t, uint32_t n)
{
    uint32_t size = 16;
    while (size < 2 * n)
        size *= 2;
    t->slots = kzalloc(size * sizeof *t->slots);
    t->mask = size - 1;
    return t->slots != NULL;
}

/* The slot holding key, or the empty one where it goes. */
static struct pprof_id_slot *id_table_find(struct pprof_id_table *t, uint64_t key)
{
    for (uint32_t i = hash64(key) & t->mask;; i = (i + 1) & t->mask)
        if (t->slots[i].id == 0 || t->slots[i].key == key)
            return &t->slots[i];
}

/* ---- the builder ---------------------------------------------------------------------------------------- */

static void release(struct pprof_builder *b)
{
    pb_free(&b->out);
    pb_free(&b->strings);
    kfree(b->refs);
    kfree(b->string_slots);
    kfree(b->locations.slots);
    kfree(b->functions.slots);
    b->refs = NULL;
    b->string_slots = NULL;
    b->locations.slots = b->functions.slots = NULL;
}

bool pprof_builder_init(struct pprof_builder *b, const struct symtab *tab, uint32_t max_frames,
                        uint32_t max_strings)
{
    memset(b, 0, sizeof *b);
    b->tab = tab;
    pb_init(&b->out, PPROF_ENCODE_LIMIT);
    pb_init(&b->strings, PPROF_ENCODE_LIMIT);
    b->max_strings = max_strings;
    uint32_t slots = 16;
    while (slots < 2 * max_strings)
        slots *= 2;
    b->string_mask = slots - 1;
    b->refs = kzalloc(max_strings * sizeof *b->refs);
    b->string_slots = kzalloc(slots * sizeof *b->string_slots);
    bool ok = b->refs && b->string_slots && id_table_init(&b->locations, max_frames + 1) &&
              id_table_init(&b->functions, max_frames + 1);
    if (!ok)
        release(b);
    return ok;
}

bool pprof_builder_finish(struct pprof_builder *b, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    pb_put_bytes(&b->out, b->strings.data, b->strings.len);
    bool ok = !b->full && !b->out.failed && !b->strings.failed;
    if (ok)
        *data = pb_take(&b->out, len);
    release(b);
    return ok && *data;
}

/* ---- the string table ---------------------------------------------------------------------------------- */

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static uint32_t intern_n(struct pprof_builder *b, const char *s, size_t len)
{
    uint32_t i = hash_bytes(s, len) & b->string_mask;
    for (;; i = (i + 1) & b->string_mask) {
        uint32_t n = b->string_slots[i];
        if (n == 0)
            break;
        const struct pprof_string_ref *r = &b->refs[n - 1];
        if (!b->strings.failed && r->len == len && memcmp(b->strings.data + r->offset, s, len) == 0)
            return n - 1;
    }
    if (b->nstrings == b->max_strings) {
        b->full = true;
        return 0;
    }
    pb_put_key(&b->strings, PROFILE_STRING_TABLE, PB_WIRE_LEN);
    pb_put_varint(&b->strings, len);
    b->refs[b->nstrings] = (struct pprof_string_ref){ (uint32_t)b->strings.len, (uint32_t)len };
    pb_put_bytes(&b->strings, s, len);
    b->string_slots[i] = ++b->nstrings;
    return b->nstrings - 1;
}

uint32_t pprof_intern(struct pprof_builder *b, const char *s)
{
    return intern_n(b, s, strlen(s));
}

uint32_t pprof_intern_u64(struct pprof_builder *b, uint64_t v)
{
    char text[24];
    ksnprintf(text, sizeof text, "%llu", (unsigned long long)v);
    return pprof_intern(b, text);
}

/* ---- locations and functions ----------------------------------------------------------------------------- */

/* A function of its own, named by the string index name. */
static uint32_t write_function(struct pprof_builder *b, uint32_t id, uint32_t name)
{
    pb_mark m = pb_begin(&b->out, PROFILE_FUNCTION);
    pb_uint(&b->out, FUNCTION_ID, id);
    pb_uint(&b->out, FUNCTION_NAME, name);
    pb_uint(&b->out, FUNCTION_SYSTEM_NAME, name);
    pb_end(&b->out, m);
    return id;
}

/* The function of the symbol at start named name, written when first met. */
static uint32_t function_id(struct pprof_builder *b, uint64_t start, const char *name)
{
    struct pprof_id_slot *slot = id_table_find(&b->functions, start);
    if (slot->id)
        return slot->id;
    if (b->nfunctions > b->functions.mask / 2) {
        b->full = true;
        return 0;
    }
    slot->key = start;
    slot->id = ++b->nfunctions;
    return write_function(b, slot->id, pprof_intern(b, name));
}

/* A location's line naming function fid (none for 0). */
static void location_line(struct pprof_builder *b, uint32_t fid)
{
    if (!fid)
        return;
    pb_mark line = pb_begin(&b->out, LOCATION_LINE);
    pb_uint(&b->out, LINE_FUNCTION_ID, fid);
    pb_end(&b->out, line);
}

uint64_t pprof_location(struct pprof_builder *b, uint64_t addr, bool leaf)
{
    struct pprof_id_slot *slot = id_table_find(&b->locations, addr << 1 | leaf);
    if (slot->id)
        return slot->id;
    if (b->nlocations > b->locations.mask / 2) {
        b->full = true;
        return 0;
    }
    slot->key = addr << 1 | leaf;
    slot->id = ++b->nlocations;
    struct symbol_hit hit;
    bool resolved = leaf ? symtab_lookup(b->tab, addr, &hit) : symtab_lookup_return(b->tab, addr, &hit);
    uint32_t fid = resolved ? function_id(b, hit.start, hit.name) : 0;
    pb_mark m = pb_begin(&b->out, PROFILE_LOCATION);
    pb_uint(&b->out, LOCATION_ID, slot->id);
    if (addr >= b->memory_start && addr < b->memory_limit)
        pb_uint(&b->out, LOCATION_MAPPING_ID, KERNEL_MAPPING_ID);
    pb_uint(&b->out, LOCATION_ADDRESS, addr);
    location_line(b, fid);
    pb_end(&b->out, m);
    return slot->id;
}

uint64_t pprof_named_location(struct pprof_builder *b, const char *name)
{
    /* The function first, then its name: the order the "[not tracked]" sample has always been written in. */
    uint32_t fid = b->nfunctions + 1;
    uint32_t s = pprof_intern(b, name);
    struct pprof_id_slot *slot = id_table_find(&b->locations, NAMED_KEY | s);
    if (slot->id)
        return slot->id;
    if (b->nlocations > b->locations.mask / 2 || b->nfunctions > b->functions.mask / 2) {
        b->full = true;
        return 0;
    }
    b->nfunctions = fid;
    write_function(b, fid, s);
    slot->key = NAMED_KEY | s;
    slot->id = ++b->nlocations;
    pb_mark m = pb_begin(&b->out, PROFILE_LOCATION);
    pb_uint(&b->out, LOCATION_ID, slot->id);
    location_line(b, fid);
    pb_end(&b->out, m);
    return slot->id;
}

/* ---- the header, comments, samples --------------------------------------------------------------------- */

static void value_type(struct pprof_builder *b, uint32_t field, uint32_t type, uint32_t unit)
{
    pb_mark m = pb_begin(&b->out, field);
    pb_uint(&b->out, VALUE_TYPE_TYPE, type);
    pb_uint(&b->out, VALUE_TYPE_UNIT, unit);
    pb_end(&b->out, m);
}

void pprof_write_header(struct pprof_builder *b, const struct pprof_header *h)
{
    const struct pprof_mapping *map = &h->mapping;
    b->memory_start = map->memory_start;
    b->memory_limit = map->memory_limit;
    pprof_intern(b, ""); /* index 0, as profile.proto requires */
    uint32_t period_type = pprof_intern(b, h->period_type[0]);
    uint32_t period_unit = pprof_intern(b, h->period_type[1]);
    for (unsigned i = 0; i < h->ntypes && i < PPROF_MAX_SAMPLE_TYPES; i++) {
        uint32_t type = pprof_intern(b, h->sample_types[i][0]);
        value_type(b, PROFILE_SAMPLE_TYPE, type, pprof_intern(b, h->sample_types[i][1]));
    }
    value_type(b, PROFILE_PERIOD_TYPE, period_type, period_unit);
    pb_uint(&b->out, PROFILE_PERIOD, h->period);
    if (h->time_nanos)
        pb_uint(&b->out, PROFILE_TIME_NANOS, (uint64_t)h->time_nanos);
    pb_uint(&b->out, PROFILE_DURATION_NANOS, h->duration_nanos);
    if (h->default_type)
        pb_uint(&b->out, PROFILE_DEFAULT_SAMPLE_TYPE, pprof_intern(b, h->default_type));

    pb_mark m = pb_begin(&b->out, PROFILE_MAPPING);
    pb_uint(&b->out, MAPPING_ID, KERNEL_MAPPING_ID);
    pb_uint(&b->out, MAPPING_MEMORY_START, map->memory_start);
    pb_uint(&b->out, MAPPING_MEMORY_LIMIT, map->memory_limit);
    pb_uint(&b->out, MAPPING_FILE_OFFSET, map->file_offset);
    pb_uint(&b->out, MAPPING_FILENAME, pprof_intern(b, "kprof.elf"));
    if (map->build_id && map->build_id[0])
        pb_uint(&b->out, MAPPING_BUILD_ID, pprof_intern(b, map->build_id));
    /* has_functions (and filenames, line numbers) stay false although the locations carry the baked names: pprof
     * re-symbolises only a mapping that says it is not, so `go tool pprof build/kprof.elf URL` replaces the
     * names with the ELF's functions and source lines, and without the ELF the names here stand. */
    pb_end(&b->out, m);
}

void pprof_comment(struct pprof_builder *b, const char *fmt, ...)
{
    char text[256]; /* the longest, a CPU profile's first: a 63-character source and five 20-digit numbers fit */
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pb_uint(&b->out, PROFILE_COMMENT, pprof_intern(b, text));
}

pb_mark pprof_sample_begin(struct pprof_builder *b, const uint64_t *locs, size_t nlocs, const uint64_t *values,
                           size_t nvalues)
{
    pb_mark m = pb_begin(&b->out, PROFILE_SAMPLE);
    pb_packed(&b->out, SAMPLE_LOCATION_ID, locs, nlocs);
    pb_packed(&b->out, SAMPLE_VALUE, values, nvalues);
    return m;
}

void pprof_label_ids(struct pprof_builder *b, uint32_t key, uint32_t value)
{
    pb_mark m = pb_begin(&b->out, SAMPLE_LABEL);
    pb_uint(&b->out, LABEL_KEY, key);
    pb_uint(&b->out, LABEL_STR, value);
    pb_end(&b->out, m);
}

void pprof_label(struct pprof_builder *b, const char *key, const char *value)
{
    uint32_t k = pprof_intern(b, key);
    pprof_label_ids(b, k, pprof_intern(b, value));
}

void pprof_label_num(struct pprof_builder *b, const char *key, uint64_t num, const char *unit)
{
    pb_mark m = pb_begin(&b->out, SAMPLE_LABEL);
    pb_uint(&b->out, LABEL_KEY, pprof_intern(b, key));
    pb_uint(&b->out, LABEL_NUM, num);
    pb_uint(&b->out, LABEL_NUM_UNIT, pprof_intern(b, unit));
    pb_end(&b->out, m);
}

void pprof_sample_end(struct pprof_builder *b, pb_mark m)
{
    pb_end(&b->out, m);
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
