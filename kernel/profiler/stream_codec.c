/* kernel/profiler/stream_codec.c: the pure half of `profile stream` (kernel/profiler/stream_codec.h describes the wire
 * format): the header and end lines written and parsed back strictly, whole datagrams parsed, records packed
 * into datagrams with the accounting every header carries, the command's words and the destination rule.
 * Nothing here sends or sleeps: the caller hands in a send function and the clock, so the host tests drive it. */
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

/* The header line; *samples_at (when not NULL) gets the offset of samples='s digits. */
static size_t format_header(const struct profile_stream_header *h, char *buf, size_t cap, size_t *samples_at)
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
    return format_header(h, buf, cap, 0);
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

/* ---- packing ---------------------------------------------------------------------------------------- */

void profile_streamer_init(struct profile_streamer *s, uint32_t run_id, const struct profile_run *run,
                           const char *build_id, profile_stream_send_fn send, void *send_arg, int64_t now_ns)
{
    memset(s, 0, sizeof *s);
    s->fixed.run = run_id;
    profile_raw_source_word(run->source_name ? run->source_name : run->source, s->fixed.source,
                            sizeof s->fixed.source);
    s->fixed.period = profile_run_period(run);
    s->fixed.unit = profile_run_unit(run);
    s->fixed.cpus = run->ncpus;
    if (build_id && field_hex_id_valid(build_id, PROFILE_BUILD_ID_MAX))
        strlcpy(s->fixed.build_id, build_id, sizeof s->fixed.build_id);
    s->send = send;
    s->send_arg = send_arg;
    s->last_send_ns = now_ns;
}

/* Begins a datagram: its header is written now, with the numbers of now and samples=99 (the widest it can
 * get), and the body follows it; the count is put in when it is sent. */
static void open_datagram(struct profile_streamer *s, int64_t now_ns)
{
    s->next = s->fixed;
    s->next.seq = s->seq;
    s->next.first = s->drained;
    s->next.ring_dropped = s->ring_dropped;
    s->next.unsent = s->unsent;
    s->next.time_ns = now_ns;
    s->next.samples = PROFILE_STREAM_DATAGRAM_SAMPLES;
    /* +1: the header is written one byte in, so a one-digit count can shift its front right by one */
    s->reserved = 1 + format_header(&s->next, s->buf + 1, PROFILE_STREAM_HEADER_MAX, &s->samples_at);
    s->samples_at += 1;
    s->body_len = 0;
    s->pending = 0;
    s->open = true;
}

static bool send_one(struct profile_streamer *s, const char *data, size_t len, int64_t now_ns)
{
    bool ok = s->send(s->send_arg, data, len);
    s->seq++;
    s->last_send_ns = now_ns;
    if (ok)
        s->datagrams++;
    else
        s->send_failures++;
    return ok;
}

/* Puts the count into the header and sends header and body as one datagram. */
static void send_datagram(struct profile_streamer *s, int64_t now_ns)
{
    _Static_assert(PROFILE_STREAM_DATAGRAM_SAMPLES == 99, "samples= is reserved two digits");
    char *start = s->buf + 1;
    uint32_t k = s->pending;
    if (k >= 10) {
        start[s->samples_at - 1] = (char)('0' + k / 10);
        start[s->samples_at] = (char)('0' + k % 10);
    } else {
        /* one digit: the header's front moves right by one onto the first '9' */
        s->buf[s->samples_at + 1] = (char)('0' + k);
        for (size_t i = s->samples_at; i > 1; i--)
            s->buf[i] = s->buf[i - 1];
        start = s->buf + 2;
    }
    size_t len = (size_t)(s->buf + s->reserved + s->body_len - start);
    s->next.samples = k;
    bool ok = send_one(s, start, len, now_ns);
    if (ok)
        s->sent += k;
    else
        s->unsent += k;
    s->open = false;
}

void profile_streamer_flush(struct profile_streamer *s, int64_t now_ns)
{
    if (s->open && s->pending > 0)
        send_datagram(s, now_ns);
}

void profile_streamer_add(struct profile_streamer *s, const struct profile_record *rec, int64_t now_ns)
{
    char line[PROFILE_RAW_LINE_MAX];
    size_t n = profile_raw_record_line(rec, line, sizeof line);
    if (n == 0)
        return;
    /* the datagram is reserved - 1 + body_len bytes at most (the spare byte in front is not sent) */
    if (s->open && (s->pending == PROFILE_STREAM_DATAGRAM_SAMPLES ||
                    s->reserved - 1 + s->body_len + n > PROFILE_STREAM_DATAGRAM_MAX))
        send_datagram(s, now_ns);
    if (!s->open)
        open_datagram(s, now_ns);
    memcpy(s->buf + s->reserved + s->body_len, line, n);
    s->body_len += n;
    s->pending++;
    s->drained++;
}

/* profile_streamer_drain's take: the streamer and the clock of this drain. */
struct streamer_take {
    struct profile_streamer *streamer;
    int64_t now_ns;
};

static void take_into_datagram(void *arg, const struct profile_record *rec)
{
    struct streamer_take *into = arg;
    profile_streamer_add(into->streamer, rec, into->now_ns);
}

void profile_streamer_drain(struct profile_streamer *s, struct profile_run *run, const struct profile_filter *filter,
                            int64_t now_ns)
{
    struct streamer_take into = { s, now_ns };
    profiler_drain(run, filter, take_into_datagram, &into);
    s->ring_dropped = profiler_drops(run);
    profile_streamer_flush(s, now_ns);
}

void profile_streamer_heartbeat(struct profile_streamer *s, int64_t now_ns)
{
    if (now_ns - s->last_send_ns < (int64_t)PROFILE_STREAM_HEARTBEAT_MS * 1000000)
        return;
    profile_streamer_flush(s, now_ns);
    if (now_ns - s->last_send_ns < (int64_t)PROFILE_STREAM_HEARTBEAT_MS * 1000000)
        return;
    open_datagram(s, now_ns);
    send_datagram(s, now_ns);
}

uint64_t profile_streamer_produced(const struct profile_streamer *s)
{
    return s->drained + s->ring_dropped;
}

void profile_streamer_finish(struct profile_streamer *s, enum profile_stream_reason reason, int64_t now_ns,
                             struct profile_stream_end *end)
{
    profile_streamer_flush(s, now_ns);
    end->run = s->fixed.run;
    end->seq = s->seq;
    end->produced = profile_streamer_produced(s);
    end->ring_dropped = s->ring_dropped;
    end->unsent = s->unsent;
    end->reason = reason;
    char line[PROFILE_STREAM_HEADER_MAX];
    size_t n = profile_stream_format_end(end, line, sizeof line);
    /* The copies are one datagram repeated: one seq, so a receiver that gets two counts one. */
    for (int i = 0; i < PROFILE_STREAM_END_COPIES; i++) {
        if (s->send(s->send_arg, line, n))
            s->datagrams++;
        else
            s->send_failures++;
    }
    s->seq++;
    s->last_send_ns = now_ns;
}

/* ---- the command's words and where a stream may go ------------------------------------------------- */

/* "a.b.c.d:PORT" or "PORT". */
static bool parse_target(const char *word, struct profile_stream_request *req)
{
    const char *colon = 0;
    for (const char *p = word; *p; p++)
        if (*p == ':')
            colon = colon ? word : p; /* a second colon: make the host part fail below */
    uint64_t port;
    if (!colon) {
        req->has_host = false;
        req->host = 0;
    } else {
        char host[16];
        size_t n = (size_t)(colon - word);
        if (colon == word || n >= sizeof host)
            return false;
        memcpy(host, word, n);
        host[n] = 0;
        if (!parse_ipv4(host, &req->host))
            return false;
        req->has_host = true;
        word = colon + 1;
    }
    if (!parse_u64_range(word, 1, 65535, &port))
        return false;
    req->port = (uint16_t)port;
    return true;
}

bool profile_stream_parse_args(int argc, char **argv, struct profile_stream_request *req)
{
    memset(req, 0, sizeof *req);
    if (argc < 2 || strcmp(argv[0], "profile") != 0 || strcmp(argv[1], "stream") != 0)
        return false;
    if (argc == 2) {
        req->action = PROFILE_STREAM_STATUS;
        return true;
    }
    if (strcmp(argv[2], "stop") == 0) {
        req->action = PROFILE_STREAM_STOP;
        return argc == 3;
    }
    req->action = PROFILE_STREAM_START;
    if (argc > 5 || !parse_target(argv[2], req))
        return false;
    int at = 3;
    uint64_t value;
    /* SECONDS is a number; `all` in its place means "until stopped, every task" */
    if (at < argc && strcmp(argv[at], "all") != 0) {
        if (!parse_u64_range(argv[at], 0, PROFILE_STREAM_SECONDS_MAX, &value))
            return false;
        req->seconds = (uint32_t)value;
        at++;
    }
    if (at < argc) {
        if (strcmp(argv[at], "all") != 0) {
            if (!parse_u64_range(argv[at], 0, UINT32_MAX, &value))
                return false;
            req->filter.by_pid = true;
            req->filter.pid = (uint32_t)value;
        }
        at++;
    }
    return at == argc;
}

const char *profile_stream_destination(const struct profile_stream_request *req,
                                       const struct profile_stream_origin *origin, bool (*allowed)(uint32_t ip),
                                       uint32_t *dst)
{
    if (!req->has_host && !origin->udp)
        return "profile stream: PORT alone means \"to the address this request came from\": on the console give "
               "HOST:PORT";
    uint32_t ip = req->has_host ? req->host : origin->ip;
    if (origin->udp && !origin->keyed && ip != origin->ip)
        return "profile stream: an unkeyed request may stream only to its own address (udpsh.key)";
    if (!allowed(ip))
        return "profile stream: that address is not in the UDP shell's allowlist (udpsh.allow)";
    *dst = ip;
    return 0;
}

bool profile_stream_may_stop(const struct profile_stream_origin *origin, uint32_t dst_ip)
{
    return !origin->udp || origin->keyed || origin->ip == dst_ip;
}
