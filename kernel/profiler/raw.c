/* kernel/profiler/raw.c: the raw sample format (kernel/profiler/raw.h describes it) -- its codec, the build-id
 * note reader, and the raw output of a run: the header, every wanted record as a line (a take callback of
 * profiler_drain) and the trailer, into a sink. Formatting goes through a bounded writer that gives up, rather
 * than cuts, when a line does not fit; parsing walks a cursor over the line and takes exactly the form the
 * formatter writes. Portable: the host tests round-trip it and drive the output over synthetic rings. */
#include "kernel/profiler/raw.h"

#include "kernel/task.h"

#include "kernel/profiler/fields.h"
#include "kernel/profiler/run.h"

#include "kernel/lib/hex.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

/* ---- units and marks ------------------------------------------------------------------------------- */

const char *profile_unit_word(enum profile_unit unit)
{
    return unit == PROFILE_UNIT_CYCLES ? "cycles" : "ns";
}

enum profile_unit profile_run_unit(const struct profile_run *run)
{
    return run->tick_reason ? PROFILE_UNIT_NS : PROFILE_UNIT_CYCLES;
}

uint64_t profile_run_period(const struct profile_run *run)
{
    return run->tick_reason ? run->period_ns : run->period_cycles;
}

/* The context marks a sample line carries, in this order; let-in carries how long the tick was held off. */
static const struct {
    const char *word;
    uint8_t flag;
} context_marks[] = {
    { "irqs-off", PROFILE_REC_IRQS_OFF },
    { "in-irq", PROFILE_REC_IN_IRQ },
    { "let-in=", PROFILE_REC_LET_IN },
};

/* A wall sample's context is what its task was doing, one word: "running", "runnable" or "waiting=WAIT"
 * (kernel/task.h's names). */
static void put_wall_context(struct field_writer *w, const struct profile_raw_sample *s)
{
    if (s->activity == TASK_ACT_WAITING) {
        field_put_str(w, "waiting=");
        field_put_str(w, task_wait_name((enum task_wait)s->waiting_on));
    } else {
        field_put_str(w, task_activity_name((enum task_activity)s->activity));
    }
}

static bool read_wall_context(const char *word, struct profile_raw_sample *out)
{
    out->flags = PROFILE_REC_WALL;
    out->waiting_on = TASK_WAIT_NONE;
    for (unsigned act = TASK_ACT_RUNNING; act < TASK_ACT_WAITING; act++)
        if (strcmp(word, task_activity_name((enum task_activity)act)) == 0) {
            out->activity = (uint8_t)act;
            return true;
        }
    if (strncmp(word, "waiting=", 8) != 0)
        return false;
    for (unsigned why = TASK_WAIT_NONE + 1; why < TASK_WAIT_KINDS; why++)
        if (strcmp(word + 8, task_wait_name((enum task_wait)why)) == 0) {
            out->activity = TASK_ACT_WAITING;
            out->waiting_on = (uint8_t)why;
            return true;
        }
    return false;
}

static void put_context(struct field_writer *w, uint8_t flags, uint32_t held_off_us)
{
    bool any = false;
    for (unsigned i = 0; i < sizeof context_marks / sizeof context_marks[0]; i++) {
        if (!(flags & context_marks[i].flag))
            continue;
        if (any)
            field_put_str(w, ",");
        field_put_str(w, context_marks[i].word);
        if (context_marks[i].flag == PROFILE_REC_LET_IN)
            field_put_u64(w, held_off_us);
        any = true;
    }
    if (!any)
        field_put_str(w, "-");
}

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
    field_put_str(&w, " period=");
    field_put_u64(&w, h->period);
    field_put_str(&w, " unit=");
    field_put_str(&w, profile_unit_word(h->unit));
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
    if (s->labels.npairs == 0 && !s->span)
        field_put_str(&w, "-");
    /* The span is one more pair, span=N, in its place among the set's keys (a set never has that key). */
    bool span_put = !s->span;
    unsigned put = 0;
    for (unsigned i = 0; i <= s->labels.npairs; i++) {
        const struct label_pair *p = i < s->labels.npairs ? &s->labels.pairs[i] : 0;
        if (p && (!label_pair_valid(p) || strcmp(p->key, LABEL_SPAN_KEY) == 0 ||
                  (i > 0 && strcmp(s->labels.pairs[i - 1].key, p->key) >= 0)))
            return 0;
        if (!span_put && (!p || strcmp(p->key, LABEL_SPAN_KEY) > 0)) {
            field_put_str(&w, put++ ? "," : "");
            field_put_str(&w, LABEL_SPAN_KEY "=");
            field_put_u64(&w, s->span);
            span_put = true;
        }
        if (!p)
            break;
        field_put_str(&w, put++ ? "," : "");
        field_put_str(&w, p->key);
        field_put_str(&w, "=");
        field_put_str(&w, p->value);
    }
    field_put_str(&w, " ");
    field_put_u64(&w, s->period);
    field_put_str(&w, " ");
    if (s->flags & PROFILE_REC_WALL)
        put_wall_context(&w, s);
    else
        put_context(&w, s->flags, s->held_off_us);
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

/* "-", or 1..4 pairs "k=v" and the span "span=N" (N decimal, 1..2^64-1, no leading zeros), joined by ','
 * in strictly increasing key order. */
static bool read_labels(struct field_cursor *c, struct label_set *set, uint64_t *span)
{
    memset(set, 0, sizeof *set);
    *span = 0;
    /* "-" alone is the empty set, but a key may itself begin with '-': "-x=a" is a pair. */
    const char *start = c->p;
    if (field_literal(c, "-") && field_end(c))
        return true;
    c->p = start;
    char last[LABEL_KEY_MAX + 1] = "";
    for (;;) {
        struct label_pair pair;
        if (!read_until(c, '=', key_char, pair.key, LABEL_KEY_MAX) || !field_literal(c, "=") ||
            !read_until(c, ',', value_char, pair.value, LABEL_VALUE_MAX))
            return false;
        if (last[0] && strcmp(last, pair.key) >= 0)
            return false;
        strlcpy(last, pair.key, sizeof last);
        if (strcmp(pair.key, LABEL_SPAN_KEY) == 0) {
            if (!parse_u64(pair.value, span) || *span == 0 || pair.value[0] == '0')
                return false;
        } else {
            if (set->npairs == LABEL_MAX_PAIRS)
                return false;
            set->pairs[set->npairs++] = pair;
        }
        if (field_end(c))
            return true;
        if (!field_literal(c, ","))
            return false;
    }
}

/* "-", or the context marks of context_marks, each at most once and in its order, comma-separated; let-in
 * with its microseconds, which end the word since it is the last. */
static bool read_context(struct field_cursor *c, struct profile_raw_sample *out)
{
    char word[PROFILE_RAW_CONTEXT_MAX + 1];
    uint8_t *flags = &out->flags;
    uint32_t *held_off_us = &out->held_off_us;
    *flags = 0;
    *held_off_us = 0;
    if (!field_word(c, word, PROFILE_RAW_CONTEXT_MAX))
        return false;
    if (strcmp(word, "-") == 0)
        return true;
    if (read_wall_context(word, out))
        return true;
    out->flags = 0;
    const char *p = word, *end = word + strlen(word);
    for (unsigned i = 0; i < sizeof context_marks / sizeof context_marks[0]; i++) {
        size_t n = strlen(context_marks[i].word);
        if ((size_t)(end - p) < n || memcmp(p, context_marks[i].word, n) != 0)
            continue;
        p += n;
        *flags |= context_marks[i].flag;
        if (context_marks[i].flag == PROFILE_REC_LET_IN) {
            struct field_cursor number = { p, end };
            if (!field_u32(&number, held_off_us))
                return false;
            p = number.p;
        }
        if (p == end)
            return true;
        if (*p != ',')
            return false;
        p++;
    }
    return false;
}

bool profile_unit_from_word(const char *word, enum profile_unit *unit)
{
    *unit = strcmp(word, "cycles") == 0 ? PROFILE_UNIT_CYCLES : PROFILE_UNIT_NS;
    return *unit == PROFILE_UNIT_CYCLES || strcmp(word, "ns") == 0;
}

static bool read_unit(struct field_cursor *c, enum profile_unit *unit)
{
    char word[8];
    return field_word(c, word, sizeof word - 1) && profile_unit_from_word(word, unit);
}

bool profile_raw_parse_header(const char *line, size_t len, struct profile_raw_header *out)
{
    struct field_cursor c;
    uint64_t version;
    memset(out, 0, sizeof *out);
    if (!field_open(&c, line, len, true) || !field_literal(&c, "# kprof raw v") || !field_u64(&c, UINT32_MAX, &version) ||
        version != PROFILE_RAW_VERSION || !field_literal(&c, " source=") ||
        !field_word(&c, out->source, PROFILE_RAW_SOURCE_MAX - 1) || !field_literal(&c, " period=") ||
        !field_u64(&c, UINT64_MAX, &out->period) || !field_literal(&c, " unit=") ||
        !read_unit(&c, &out->unit) || !field_literal(&c, " window_ms=") ||
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
        !read_labels(&c, &out->labels, &out->span) || !field_literal(&c, " ") || !field_u32(&c, &out->period) ||
        !field_literal(&c, " ") || !read_context(&c, out))
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

/* ---- the raw output of a run ------------------------------------------------------------------------ */

size_t profile_raw_record_line(const struct profile_record *rec, char *line, size_t cap)
{
    struct profile_raw_sample s;
    memset(&s, 0, sizeof s);
    s.cpu = rec->cpu;
    s.pid = rec->pid;
    s.time_ns = rec->time_ns;
    const struct label_set *labels = profile_record_labels(rec);
    if (labels)
        s.labels = *labels;
    s.span = rec->span;
    s.period = rec->period;
    if (rec->flags & PROFILE_REC_WALL) {
        s.flags = PROFILE_REC_WALL;
        s.activity = rec->wall.activity >= TASK_ACT_RUNNING && rec->wall.activity <= TASK_ACT_WAITING
                         ? rec->wall.activity
                         : TASK_ACT_RUNNING;
        s.waiting_on = rec->wall.waiting_on > TASK_WAIT_NONE && rec->wall.waiting_on < TASK_WAIT_KINDS
                           ? rec->wall.waiting_on
                           : TASK_WAIT_TIMER;
    } else {
        s.flags = rec->flags & (PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ | PROFILE_REC_LET_IN);
        s.held_off_us = (s.flags & PROFILE_REC_LET_IN) ? rec->held_off_us : 0;
    }
    s.nframes = rec->nframes > PROFILE_MAX_FRAMES ? PROFILE_MAX_FRAMES : rec->nframes;
    for (unsigned i = 0; i < s.nframes; i++)
        s.frames[i] = rec->frames[i];
    if (s.nframes == 0) {
        /* The sampler always writes frame 0; as in the fold, a record without it is a leaf of address 0. */
        s.nframes = 1;
        s.frames[0] = 0;
    }
    return profile_raw_format_sample(&s, line, cap);
}

void profile_raw_begin(const struct profile_run *run, const char *build_id, struct sink *out)
{
    char line[PROFILE_RAW_LINE_MAX];
    struct profile_raw_header h;
    memset(&h, 0, sizeof h);
    profile_raw_source_word(run->source_name ? run->source_name : run->source, h.source, sizeof h.source);
    h.period = profile_run_period(run);
    h.unit = profile_run_unit(run);
    h.window_ms = run->window_ms;
    h.cpus = run->ncpus;
    if (build_id && strlen(build_id) < sizeof h.build_id)
        strlcpy(h.build_id, build_id, sizeof h.build_id);
    size_t n = profile_raw_format_header(&h, line, sizeof line);
    if (n == 0) {
        /* a build id that is not hex: say none rather than send no header */
        h.build_id[0] = 0;
        n = profile_raw_format_header(&h, line, sizeof line);
    }
    sink_write(out, line, n);
}

void profile_raw_take(void *arg, const struct profile_record *rec)
{
    struct profile_raw_into *to = arg;
    char line[PROFILE_RAW_LINE_MAX];
    size_t n = profile_raw_record_line(rec, line, sizeof line);
    if (n) {
        sink_write(to->out, line, n);
        to->trailer->samples++;
    }
}

void profile_raw_drain(struct profile_run *run, const struct profile_filter *filter, struct sink *out,
                       struct profile_raw_trailer *t)
{
    struct profile_raw_into to = { out, t };
    profiler_drain(run, filter, profile_raw_take, &to);
}

void profile_raw_end(const struct profile_run *run, struct profile_raw_trailer *t, struct sink *out)
{
    char line[PROFILE_RAW_LINE_MAX];
    t->dropped += profiler_drops(run);
    size_t n = profile_raw_format_trailer(t, line, sizeof line);
    sink_write(out, line, n);
}

int profile_report_raw(struct profile_run *run, const struct profile_filter *filter, const char *build_id,
                       struct sink *out)
{
    struct profile_raw_trailer t = { 0, 0 };
    profile_raw_begin(run, build_id, out);
    profile_raw_drain(run, filter, out, &t);
    profile_raw_end(run, &t, out);
    return 0;
}
