/* kernel/profiler_raw.c: the raw sample format's codec and the build-id note reader (kernel/profiler_raw.h
 * describes the format). Formatting goes through a bounded writer that gives up, rather than cuts, when a
 * line does not fit; parsing walks a cursor over the line and takes exactly the form the formatter writes. */
#include "kernel/profiler_raw.h"

#include "kernel/string.h"
#include "kernel/textbuf.h"

/* ---- writing ---------------------------------------------------------------------------------------- */

struct writer {
    struct textbuf text;
    bool overflow; /* something did not fit: the line is given up, not cut */
};

static void put(struct writer *w, const char *text, size_t n)
{
    if (w->overflow || n > textbuf_room(&w->text)) {
        w->overflow = true;
        return;
    }
    textbuf_append(&w->text, text, n);
}

static void put_str(struct writer *w, const char *text)
{
    put(w, text, strlen(text));
}

static void put_u64(struct writer *w, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(w, digits + sizeof digits - n, n);
}

static void put_i64(struct writer *w, int64_t v)
{
    if (v < 0) {
        put(w, "-", 1);
        put_u64(w, (uint64_t)0 - (uint64_t)v); /* right for INT64_MIN too */
    } else {
        put_u64(w, (uint64_t)v);
    }
}

static void put_hex(struct writer *w, uint64_t v)
{
    char digits[18];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = hex_lower((unsigned)v);
        v >>= 4;
    } while (v);
    digits[sizeof digits - 1 - n++] = 'x';
    digits[sizeof digits - 1 - n++] = '0';
    put(w, digits + sizeof digits - n, n);
}

static size_t finish(struct writer *w)
{
    put(w, "\n", 1);
    if (w->overflow) {
        if (w->text.cap > 0)
            w->text.buf[0] = 0;
        return 0;
    }
    return w->text.len;
}

static void writer_init(struct writer *w, char *buf, size_t cap)
{
    textbuf_init(&w->text, buf, cap);
    w->overflow = cap == 0;
}

static bool word_valid(const char *word, size_t max)
{
    size_t n = 0;
    for (; word[n]; n++)
        if (n == max || word[n] <= ' ' || word[n] > '~')
            return false;
    return n > 0;
}

static bool hex_id_valid(const char *id)
{
    size_t n = 0;
    for (; id[n]; n++)
        if (n == 2 * PROFILE_BUILD_ID_MAX || !((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
            return false;
    return n % 2 == 0; /* "" is none */
}

size_t profile_raw_format_header(const struct profile_raw_header *h, char *buf, size_t cap)
{
    struct writer w;
    writer_init(&w, buf, cap);
    if (!word_valid(h->source, PROFILE_RAW_SOURCE_MAX - 1) || !hex_id_valid(h->build_id))
        return 0;
    put_str(&w, "# kprof raw v");
    put_u64(&w, PROFILE_RAW_VERSION);
    put_str(&w, " source=");
    put_str(&w, h->source);
    put_str(&w, " period_ns=");
    put_u64(&w, h->period_ns);
    put_str(&w, " window_ms=");
    put_u64(&w, h->window_ms);
    put_str(&w, " cpus=");
    put_u64(&w, h->cpus);
    put_str(&w, " build_id=");
    put_str(&w, h->build_id[0] ? h->build_id : "none");
    return finish(&w);
}

size_t profile_raw_format_sample(const struct profile_raw_sample *s, char *buf, size_t cap)
{
    struct writer w;
    writer_init(&w, buf, cap);
    if (s->nframes < 1 || s->nframes > PROFILE_MAX_FRAMES || s->labels.npairs > LABEL_MAX_PAIRS)
        return 0;
    put_str(&w, "s ");
    put_u64(&w, s->cpu);
    put_str(&w, " ");
    put_u64(&w, s->pid);
    put_str(&w, " ");
    put_i64(&w, s->time_ns);
    put_str(&w, " ");
    if (s->labels.npairs == 0)
        put_str(&w, "-");
    for (unsigned i = 0; i < s->labels.npairs; i++) {
        const struct label_pair *p = &s->labels.pairs[i];
        if (!label_pair_valid(p) || (i > 0 && strcmp(s->labels.pairs[i - 1].key, p->key) >= 0))
            return 0;
        if (i)
            put_str(&w, ",");
        put_str(&w, p->key);
        put_str(&w, "=");
        put_str(&w, p->value);
    }
    for (unsigned i = 0; i < s->nframes; i++) {
        put_str(&w, " ");
        put_hex(&w, s->frames[i]);
    }
    return finish(&w);
}

size_t profile_raw_format_trailer(const struct profile_raw_trailer *t, char *buf, size_t cap)
{
    struct writer w;
    writer_init(&w, buf, cap);
    put_str(&w, "# kprof raw end samples=");
    put_u64(&w, t->samples);
    put_str(&w, " dropped=");
    put_u64(&w, t->dropped);
    return finish(&w);
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

struct cursor {
    const char *p;
    const char *end; /* the end of the line's content: its newline stripped */
};

/* The content of a complete line: it must end with "\n" or "\r\n", and hold neither anywhere else. */
static bool line_open(struct cursor *c, const char *line, size_t len)
{
    if (len == 0 || line[len - 1] != '\n')
        return false;
    len--;
    if (len > 0 && line[len - 1] == '\r')
        len--;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '\n' || line[i] == '\r' || line[i] == 0)
            return false;
    c->p = line;
    c->end = line + len;
    return true;
}

static bool at_end(const struct cursor *c)
{
    return c->p == c->end;
}

static bool literal(struct cursor *c, const char *text)
{
    size_t n = strlen(text);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, text, n) != 0)
        return false;
    c->p += n;
    return true;
}

/* A field ends at a space or at the end of the line. */
static bool field_end(const struct cursor *c)
{
    return c->p == c->end || *c->p == ' ';
}

/* Decimal, no sign, no leading zero (but "0"), up to max. */
static bool read_u64(struct cursor *c, uint64_t max, uint64_t *out)
{
    const char *start = c->p;
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        c->p++;
    }
    size_t n = (size_t)(c->p - start);
    if (n == 0 || (n > 1 && *start == '0') || v > max || !field_end(c))
        return false;
    *out = v;
    return true;
}

static bool read_u32(struct cursor *c, uint32_t *out)
{
    uint64_t v;
    if (!read_u64(c, UINT32_MAX, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool read_i64(struct cursor *c, int64_t *out)
{
    bool negative = c->p < c->end && *c->p == '-';
    if (negative)
        c->p++;
    uint64_t v;
    if (!read_u64(c, negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v) || (negative && v == 0))
        return false;
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* 0x and 1..16 lowercase hex digits, no leading zero (but 0x0). */
static bool read_hex(struct cursor *c, uint64_t *out)
{
    if (!literal(c, "0x"))
        return false;
    const char *start = c->p;
    uint64_t v = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else
            break;
        v = v << 4 | d;
        c->p++;
    }
    size_t n = (size_t)(c->p - start);
    if (n == 0 || n > 16 || (n > 1 && *start == '0') || !field_end(c))
        return false;
    *out = v;
    return true;
}

/* Characters up to the next space or the end into buf (1..max of them, NUL-terminated). */
static bool read_word(struct cursor *c, char *buf, size_t max)
{
    size_t n = 0;
    while (c->p < c->end && *c->p != ' ') {
        if (n == max)
            return false;
        buf[n++] = *c->p++;
    }
    buf[n] = 0;
    return n > 0;
}

/* Characters while ok(c) up to stop into buf (1..max of them). */
static bool read_until(struct cursor *c, char stop, bool (*ok)(char), char *buf, size_t max)
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
static bool read_labels(struct cursor *c, struct label_set *set)
{
    memset(set, 0, sizeof *set);
    /* "-" alone is the empty set, but a key may itself begin with '-': "-x=a" is a pair. */
    const char *start = c->p;
    if (literal(c, "-") && field_end(c))
        return true;
    c->p = start;
    for (;;) {
        if (set->npairs == LABEL_MAX_PAIRS)
            return false;
        struct label_pair *p = &set->pairs[set->npairs];
        if (!read_until(c, '=', key_char, p->key, LABEL_KEY_MAX) || !literal(c, "=") ||
            !read_until(c, ',', value_char, p->value, LABEL_VALUE_MAX))
            return false;
        if (set->npairs > 0 && strcmp(set->pairs[set->npairs - 1].key, p->key) >= 0)
            return false;
        set->npairs++;
        if (field_end(c))
            return true;
        if (!literal(c, ","))
            return false;
    }
}

bool profile_raw_parse_header(const char *line, size_t len, struct profile_raw_header *out)
{
    struct cursor c;
    uint64_t version;
    memset(out, 0, sizeof *out);
    if (!line_open(&c, line, len) || !literal(&c, "# kprof raw v") || !read_u64(&c, UINT32_MAX, &version) ||
        version != PROFILE_RAW_VERSION || !literal(&c, " source=") ||
        !read_word(&c, out->source, PROFILE_RAW_SOURCE_MAX - 1) || !literal(&c, " period_ns=") ||
        !read_u64(&c, UINT64_MAX, &out->period_ns) || !literal(&c, " window_ms=") ||
        !read_u32(&c, &out->window_ms) || !literal(&c, " cpus=") || !read_u32(&c, &out->cpus) ||
        !literal(&c, " build_id="))
        return false;
    for (const char *p = out->source; *p; p++)
        if (*p <= ' ' || *p > '~')
            return false;
    if (literal(&c, "none"))
        return at_end(&c);
    if (!read_word(&c, out->build_id, 2 * PROFILE_BUILD_ID_MAX) || !hex_id_valid(out->build_id))
        return false;
    return at_end(&c);
}

bool profile_raw_parse_sample(const char *line, size_t len, struct profile_raw_sample *out)
{
    struct cursor c;
    memset(out, 0, sizeof *out);
    if (!line_open(&c, line, len) || !literal(&c, "s ") || !read_u32(&c, &out->cpu) || !literal(&c, " ") ||
        !read_u32(&c, &out->pid) || !literal(&c, " ") || !read_i64(&c, &out->time_ns) || !literal(&c, " ") ||
        !read_labels(&c, &out->labels))
        return false;
    while (!at_end(&c)) {
        if (out->nframes == PROFILE_MAX_FRAMES || !literal(&c, " ") || !read_hex(&c, &out->frames[out->nframes]))
            return false;
        out->nframes++;
    }
    return out->nframes > 0;
}

bool profile_raw_parse_trailer(const char *line, size_t len, struct profile_raw_trailer *out)
{
    struct cursor c;
    memset(out, 0, sizeof *out);
    return line_open(&c, line, len) && literal(&c, "# kprof raw end samples=") &&
           read_u64(&c, UINT64_MAX, &out->samples) && literal(&c, " dropped=") &&
           read_u64(&c, UINT64_MAX, &out->dropped) && at_end(&c);
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
