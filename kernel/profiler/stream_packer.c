/* kernel/profiler/stream_packer.c: the sending side of `profile stream` (kernel/profiler/stream_packer.h): records
 * packed into datagrams with the accounting every header carries, the heartbeat and the end line. Nothing here
 * sends or sleeps: the caller hands in a send function and the clock. */
#include "kernel/profiler/stream_packer.h"

#include "kernel/profiler/fields.h"

#include "kernel/lib/string.h"

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
    s->reserved = 1 + profile_stream_format_header_at(&s->next, s->buf + 1, PROFILE_STREAM_HEADER_MAX, &s->samples_at);
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

