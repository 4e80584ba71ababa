/* kernel/profiler/stream_codec.c: the wire format of `profile stream` (kernel/profiler/stream_codec.h describes it):
 * the header and end lines written and parsed back strictly, and whole datagrams parsed. Pure: the host tests
 * and the fuzz target drive it. */
#include "kernel/profiler/stream_codec.h"

#include "kernel/profiler/fields.h"
#include "kernel/profiler/run.h"

#include "kernel/lib/hex.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

static const char *const reason_words[] = {
    [PROFILE_STREAM_STOPPED] = "stopped", [PROFILE_STREAM_TIME] = "time", [PROFILE_STREAM_ERROR] = "error",
};

const char *profile_stream_reason_word(enum profile_stream_reason reason)
{
    return (unsigned)reason <= PROFILE_STREAM_ERROR ? reason_words[reason] : "?";
}

/* ---- writing ---------------------------------------------------------------------------------------- */

/* The run: always 8 lowercase hex digits. */
static void put_run(struct field_writer *w, uint32_t run)
{
    char digits[8];
    for (int i = 0; i < 8; i++)
        digits[i] = hex_lower(run >> (28 - 4 * i));
    field_put(w, digits, 8);
}

size_t profile_stream_format_header_at(const struct profile_stream_header *h, char *buf, size_t cap,
                                       size_t *samples_at)
{
    struct field_writer w;
    field_writer_init(&w, buf, cap);
    if (!field_word_valid(h->source, PROFILE_RAW_SOURCE_MAX - 1) || !field_hex_id_valid(h->build_id, PROFILE_BUILD_ID_MAX) ||
        h->samples > PROFILE_STREAM_DATAGRAM_SAMPLES)
        w.overflow = true;
    field_put_str(&w, "# kprof stream v");
    field_put_u64(&w, PROFILE_STREAM_VERSION);
    field_put_str(&w, " run=");
    put_run(&w, h->run);
    field_put_str(&w, " seq=");
    field_put_u64(&w, h->seq);
    field_put_str(&w, " first=");
    field_put_u64(&w, h->first);
    field_put_str(&w, " samples=");
    if (samples_at)
        *samples_at = w.text.len;
    field_put_u64(&w, h->samples);
    field_put_str(&w, " ring_dropped=");
    field_put_u64(&w, h->ring_dropped);
    field_put_str(&w, " unsent=");
    field_put_u64(&w, h->unsent);
    field_put_str(&w, " time_ns=");
    field_put_i64(&w, h->time_ns);
    field_put_str(&w, " source=");
    field_put_str(&w, h->source);
    field_put_str(&w, " period=");
    field_put_u64(&w, h->period);
    field_put_str(&w, " unit=");
    field_put_str(&w, profile_unit_word(h->unit));
    field_put_str(&w, " cpus=");
    field_put_u64(&w, h->cpus);
    field_put_str(&w, " build_id=");
    field_put_str(&w, h->build_id[0] ? h->build_id : "none");
    return field_finish(&w);
}

size_t profile_stream_format_header(const struct profile_stream_header *h, char *buf, size_t cap)
{
    return profile_stream_format_header_at(h, buf, cap, 0);
}

size_t profile_stream_format_end(const struct profile_stream_end *e, char *buf, size_t cap)
{
    struct field_writer w;
    field_writer_init(&w, buf, cap);
    if ((unsigned)e->reason > PROFILE_STREAM_ERROR)
        w.overflow = true;
    field_put_str(&w, "# kprof stream end run=");
    put_run(&w, e->run);
    field_put_str(&w, " seq=");
    field_put_u64(&w, e->seq);
    field_put_str(&w, " produced=");
    field_put_u64(&w, e->produced);
    field_put_str(&w, " ring_dropped=");
    field_put_u64(&w, e->ring_dropped);
    field_put_str(&w, " unsent=");
    field_put_u64(&w, e->unsent);
    field_put_str(&w, " reason=");
    field_put_str(&w, w.overflow ? "" : reason_words[e->reason]);
    return field_finish(&w);
}

/* ---- parsing ---------------------------------------------------------------------------------------- */

/* Exactly 8 lowercase hex digits (the run: printed %08x, so leading zeros belong to it). */
static bool read_run(struct field_cursor *c, uint32_t *out)
{
    if (c->end - c->p < 8)
        return false;
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        char ch = *c->p++;
        if (ch >= '0' && ch <= '9')
            v = v << 4 | (uint32_t)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            v = v << 4 | (uint32_t)(ch - 'a' + 10);
        else
            return false;
    }
    *out = v;
    return field_end(c);
}

bool profile_stream_parse_header(const char *line, size_t len, struct profile_stream_header *out)
{
    struct field_cursor c;
    uint64_t version;
    uint64_t samples;
    char build_id[2 * PROFILE_BUILD_ID_MAX + 1];
    char unit[8];
    if (!field_open(&c, line, len, false) || !field_literal(&c, "# kprof stream v") || !field_u64(&c, UINT32_MAX, &version) ||
        version != PROFILE_STREAM_VERSION || !field_literal(&c, " run=") || !read_run(&c, &out->run) ||
        !field_literal(&c, " seq=") || !field_u64(&c, UINT64_MAX, &out->seq) || !field_literal(&c, " first=") ||
        !field_u64(&c, UINT64_MAX, &out->first) || !field_literal(&c, " samples=") ||
        !field_u64(&c, PROFILE_STREAM_DATAGRAM_SAMPLES, &samples) || !field_literal(&c, " ring_dropped=") ||
        !field_u64(&c, UINT64_MAX, &out->ring_dropped) || !field_literal(&c, " unsent=") ||
        !field_u64(&c, UINT64_MAX, &out->unsent) || !field_literal(&c, " time_ns=") || !field_i64(&c, &out->time_ns) ||
        !field_literal(&c, " source=") || !field_word(&c, out->source, PROFILE_RAW_SOURCE_MAX - 1) ||
        !field_word_valid(out->source, PROFILE_RAW_SOURCE_MAX - 1) || !field_literal(&c, " period=") ||
        !field_u64(&c, UINT64_MAX, &out->period) || !field_literal(&c, " unit=") ||
        !field_word(&c, unit, sizeof unit - 1) || !profile_unit_from_word(unit, &out->unit) || !field_literal(&c, " cpus=") || !field_u32(&c, &out->cpus) ||
        !field_literal(&c, " build_id=") || !field_word(&c, build_id, 2 * PROFILE_BUILD_ID_MAX) || c.p != c.end)
        return false;
    out->samples = (uint32_t)samples;
    if (strcmp(build_id, "none") == 0) {
        out->build_id[0] = 0;
        return true;
    }
    if (!field_hex_id_valid(build_id, PROFILE_BUILD_ID_MAX))
        return false;
    strlcpy(out->build_id, build_id, sizeof out->build_id);
    return true;
}

bool profile_stream_parse_end(const char *line, size_t len, struct profile_stream_end *out)
{
    struct field_cursor c;
    char reason[8];
    if (!field_open(&c, line, len, false) || !field_literal(&c, "# kprof stream end run=") || !read_run(&c, &out->run) ||
        !field_literal(&c, " seq=") || !field_u64(&c, UINT64_MAX, &out->seq) || !field_literal(&c, " produced=") ||
        !field_u64(&c, UINT64_MAX, &out->produced) || !field_literal(&c, " ring_dropped=") ||
        !field_u64(&c, UINT64_MAX, &out->ring_dropped) || !field_literal(&c, " unsent=") ||
        !field_u64(&c, UINT64_MAX, &out->unsent) || !field_literal(&c, " reason=") ||
        !field_word(&c, reason, sizeof reason - 1) || c.p != c.end)
        return false;
    for (unsigned r = PROFILE_STREAM_STOPPED; r <= PROFILE_STREAM_ERROR; r++) {
        if (strcmp(reason, reason_words[r]) == 0) {
            out->reason = (enum profile_stream_reason)r;
            return true;
        }
    }
    return false;
}

/* The length of the line at data (its newline included), or 0 when no newline ends it before end. */
static size_t line_length(const char *data, size_t left)
{
    for (size_t i = 0; i < left; i++)
        if (data[i] == '\n')
            return i + 1;
    return 0;
}

bool profile_stream_parse_datagram(const char *data, size_t len, struct profile_stream_datagram *out,
                                   profile_stream_sample_fn on_sample, void *arg)
{
    if (len == 0 || len > PROFILE_STREAM_DATAGRAM_MAX)
        return false;
    size_t n = line_length(data, len);
    if (n == 0)
        return false;
    if (profile_stream_parse_end(data, n, &out->end)) {
        out->is_end = true;
        return n == len;
    }
    out->is_end = false;
    if (!profile_stream_parse_header(data, n, &out->header))
        return false;
    size_t at = n;
    for (uint32_t i = 0; i < out->header.samples; i++) {
        n = line_length(data + at, len - at);
        struct profile_raw_sample s;
        if (n == 0 || !profile_raw_parse_sample(data + at, n, &s))
            return false;
        /* the raw parser takes a terminal's "\r\n" too; a datagram holds only what the kernel writes */
        if (n >= 2 && data[at + n - 2] == '\r')
            return false;
        if (on_sample)
            on_sample(arg, &s);
        at += n;
    }
    return at == len;
}
