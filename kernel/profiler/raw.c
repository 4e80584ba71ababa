/* kernel/profiler/raw.c: the raw sample format's codec and the build-id note reader (kernel/profiler/raw.h
 * describes the format). Formatting goes through a bounded writer that gives up, rather than cuts, when a
 * line does not fit; parsing walks a cursor over the line and takes exactly the form the formatter writes. */
#include "kernel/profiler/raw.h"

#include "kernel/profiler/fields.h"

#include "kernel/lib/hex.h"
#include "kernel/lib/string.h"

/* ---- writing ---------------------------------------------------------------------------------------- */

size_t profile_raw_format_header(const struct profile_raw_header *h, char *buf, size_t cap)
{
    struct field_writer w;
    field_writer_init(&w, buf, cap);
    if (!field_word_valid(h->source, PROFILE_RAW_SOURCE_MAX - 1) || !field_hex_id_valid(h->build_id, PROFILE_BUILD_ID_MAX))
        return 0;
    field_put_str(&w, "# kprof raw v");
    field_put_u64(&w, PROFILE_RAW_VERSION);
    field_put_str(&w, " source=");
    field_put_str(&w, h->source);
    field_put_str(&w, " period_ns=");
    field_put_u64(&w, h->period_ns);
    field_put_str(&w, " window_ms=");
    field_put_u64(&w, h->window_ms);
    field_put_str(&w, " cpus=");
    field_put_u64(&w, h->cpus);
    field_put_str(&w, " build_id=");
    field_put_str(&w, h->build_id[0] ? h->build_id : "none");
    return field_finish(&w);
}

size_t profile_raw_format_sample(const struct profile_raw_sample *s, char *buf, size_t cap)
{
    struct field_writer w;
    field_writer_init(&w, buf, cap);
    if (s->nframes < 1 || s->nframes > PROFILE_MAX_FRAMES || s->labels.npairs > LABEL_MAX_PAIRS)
        return 0;
    field_put_str(&w, "s ");
    field_put_u64(&w, s->cpu);
    field_put_str(&w, " ");
    field_put_u64(&w, s->pid);
    field_put_str(&w, " ");
    field_put_i64(&w, s->time_ns);
    field_put_str(&w, " ");
    if (s->labels.npairs == 0)
        field_put_str(&w, "-");
    for (unsigned i = 0; i < s->labels.npairs; i++) {
        const struct label_pair *p = &s->labels.pairs[i];
        if (!label_pair_valid(p) || (i > 0 && strcmp(s->labels.pairs[i - 1].key, p->key) >= 0))
            return 0;
        if (i)
            field_put_str(&w, ",");
        field_put_str(&w, p->key);
        field_put_str(&w, "=");
        field_put_str(&w, p->value);
    }
    for (unsigned i = 0; i < s->nframes; i++) {
        field_put_str(&w, " ");
        field_put_hex(&w, s->frames[i]);
    }
    return field_finish(&w);
}

size_t profile_raw_format_trailer(const struct profile_raw_trailer *t, char *buf, size_t cap)
{
    struct field_writer w;
    field_writer_init(&w, buf, cap);
    field_put_str(&w, "# kprof raw end samples=");
    field_put_u64(&w, t->samples);
    field_put_str(&w, " dropped=");
    field_put_u64(&w, t->dropped);
    return field_finish(&w);
}

void profile_raw_source_word(const char *name, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    size_t n = 0;
    for (; name[n] && n + 1 < cap; n++)
        buf[n] = name[n] == ' ' ? '-' : (name[n] > ' ' && name[n] <= '~') ? name[n] : '?';
    buf[n] = 0;
}

/* ---- reading ---------------------------------------------------------------------------------------- */

/* Characters while ok(c) up to stop into buf (1..max of them). */
static bool read_until(struct field_cursor *c, char stop, bool (*ok)(char), char *buf, size_t max)
{
    size_t n = 0;
    while (c->p < c->end && *c->p != stop && ok(*c->p)) {
        if (n == max)
            return false;
        buf[n++] = *c->p++;
    }
    buf[n] = 0;
    return n > 0;
}

static bool key_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
}

static bool value_char(char ch)
{
    return ch > ' ' && ch <= '~' && ch != ',' && ch != '=';
}

/* "-", or 1..4 pairs "k=v" joined by ',' in strictly increasing key order. */
static bool read_labels(struct field_cursor *c, struct label_set *set)
{
    memset(set, 0, sizeof *set);
    /* "-" alone is the empty set, but a key may itself begin with '-': "-x=a" is a pair. */
    const char *start = c->p;
    if (field_literal(c, "-") && field_end(c))
        return true;
    c->p = start;
    for (;;) {
        if (set->npairs == LABEL_MAX_PAIRS)
            return false;
        struct label_pair *p = &set->pairs[set->npairs];
        if (!read_until(c, '=', key_char, p->key, LABEL_KEY_MAX) || !field_literal(c, "=") ||
            !read_until(c, ',', value_char, p->value, LABEL_VALUE_MAX))
            return false;
        if (set->npairs > 0 && strcmp(set->pairs[set->npairs - 1].key, p->key) >= 0)
            return false;
        set->npairs++;
        if (field_end(c))
            return true;
        if (!field_literal(c, ","))
            return false;
    }
}

bool profile_raw_parse_header(const char *line, size_t len, struct profile_raw_header *out)
{
    struct field_cursor c;
    uint64_t version;
    memset(out, 0, sizeof *out);
    if (!field_open(&c, line, len, true) || !field_literal(&c, "# kprof raw v") || !field_u64(&c, UINT32_MAX, &version) ||
        version != PROFILE_RAW_VERSION || !field_literal(&c, " source=") ||
        !field_word(&c, out->source, PROFILE_RAW_SOURCE_MAX - 1) || !field_literal(&c, " period_ns=") ||
        !field_u64(&c, UINT64_MAX, &out->period_ns) || !field_literal(&c, " window_ms=") ||
        !field_u32(&c, &out->window_ms) || !field_literal(&c, " cpus=") || !field_u32(&c, &out->cpus) ||
        !field_literal(&c, " build_id="))
        return false;
    for (const char *p = out->source; *p; p++)
        if (*p <= ' ' || *p > '~')
            return false;
    if (field_literal(&c, "none"))
        return field_at_end(&c);
    if (!field_word(&c, out->build_id, 2 * PROFILE_BUILD_ID_MAX) || !field_hex_id_valid(out->build_id, PROFILE_BUILD_ID_MAX))
        return false;
    return field_at_end(&c);
}

bool profile_raw_parse_sample(const char *line, size_t len, struct profile_raw_sample *out)
{
    struct field_cursor c;
    memset(out, 0, sizeof *out);
    if (!field_open(&c, line, len, true) || !field_literal(&c, "s ") || !field_u32(&c, &out->cpu) || !field_literal(&c, " ") ||
        !field_u32(&c, &out->pid) || !field_literal(&c, " ") || !field_i64(&c, &out->time_ns) || !field_literal(&c, " ") ||
        !read_labels(&c, &out->labels))
        return false;
    while (!field_at_end(&c)) {
        if (out->nframes == PROFILE_MAX_FRAMES || !field_literal(&c, " ") || !field_hex(&c, &out->frames[out->nframes]))
            return false;
        out->nframes++;
    }
    return out->nframes > 0;
}

bool profile_raw_parse_trailer(const char *line, size_t len, struct profile_raw_trailer *out)
{
    struct field_cursor c;
    memset(out, 0, sizeof *out);
    return field_open(&c, line, len, true) && field_literal(&c, "# kprof raw end samples=") &&
           field_u64(&c, UINT64_MAX, &out->samples) && field_literal(&c, " dropped=") &&
           field_u64(&c, UINT64_MAX, &out->dropped) && field_at_end(&c);
}

/* ---- the build id ----------------------------------------------------------------------------------- */

#define NOTE_GNU_BUILD_ID 3

static uint32_t read_word32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v); /* the note's own byte order, which is the running machine's */
    return v;
}

bool profile_build_id_hex(const void *notes, size_t len, char *hex, size_t cap)
{
    const unsigned char *p = notes;
    while (len >= 12) {
        uint32_t namesz = read_word32(p), descsz = read_word32(p + 4), type = read_word32(p + 8);
        /* sizes are padded to 4 bytes; computed in 64 bits so a huge size cannot wrap */
        uint64_t name_room = ((uint64_t)namesz + 3) & ~(uint64_t)3;
        uint64_t desc_room = ((uint64_t)descsz + 3) & ~(uint64_t)3;
        if (12 + name_room + desc_room > len)
            return false;
        const unsigned char *name = p + 12, *desc = name + name_room;
        if (type == NOTE_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            if (descsz == 0 || descsz > PROFILE_BUILD_ID_MAX || cap < 2 * (size_t)descsz + 1)
                return false;
            for (uint32_t i = 0; i < descsz; i++) {
                hex[2 * i] = hex_lower(desc[i] >> 4);
                hex[2 * i + 1] = hex_lower(desc[i]);
            }
            hex[2 * descsz] = 0;
            return true;
        }
        p += 12 + name_room + desc_room;
        len -= (size_t)(12 + name_room + desc_room);
    }
    return false;
}
