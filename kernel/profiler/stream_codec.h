/* kernel/profiler/stream_codec.h: the wire format of `profile stream` -- a run's samples sent as UDP datagrams while
 * it runs -- and the pure parts of the stream (kernel/profiler/stream_codec.c): the datagram's header and end lines,
 * formatted and parsed back strictly, the packing of sample lines into datagrams, the sample accounting, the
 * command's words and the rule for where a stream may go. Portable: the host tests and the fuzz target drive
 * it; the task that runs a stream and sends its datagrams is kernel/profiler/stream_task.c, the command
 * kernel/shell/cmd_profile_stream.c.
 *
 * Every datagram is at most PROFILE_STREAM_DATAGRAM_MAX bytes (one Ethernet frame's UDP payload: no IP
 * fragments) of complete text lines. A data datagram is a header line and then exactly `samples` sample lines
 * of the raw format (kernel/profiler/raw.h, "s <cpu> <pid> <time_ns> <labels> <period> <context> <frames...>"):
 *
 *   # kprof stream v2 run=1f2e3d4c seq=17 first=850 samples=9 ring_dropped=0 unsent=0 time_ns=5123456789 source=tick period=1000000 unit=ns cpus=4 build_id=9f0c...e1
 *   s 2 17 5123400000 job=a 1000000 - 0xffffffff80012345 0xffffffff80011000
 *   ...
 *
 *   run           8 lowercase hex digits, random per stream: a receiver tells two streams apart by it
 *   seq           this datagram's number in the run, from 0, one more for every datagram sent (end ones too)
 *   first         the index of this datagram's first sample among all samples the run drained (from 0): the
 *                 samples of a datagram are first .. first+samples-1, so a receiver counts lost ones from gaps
 *   samples       sample lines that follow (0: a heartbeat, sent at least every PROFILE_STREAM_HEARTBEAT_MS)
 *   ring_dropped  samples the per-CPU rings refused since the run began (full rings: the drain fell behind)
 *   unsent        samples drained but never sent because their datagram's send failed (their indexes are a
 *                 gap too), since the run began
 *   time_ns       the kernel clock (time_ns(), signed) when the datagram was begun
 *   source, period, unit, cpus, build_id   as in the raw header: the sample source's word, the nominal period
 *                 in what the source counts (cycles or ns), the CPUs sampling, the kernel ELF's build id or
 *                 "none"; version 1 had period_ns= and samples without their period and context
 *
 * The last datagram of a run, sent PROFILE_STREAM_END_COPIES times (the receiver drops repeats by run+seq,
 * the copies having the same seq), is the one line
 *
 *   # kprof stream end run=1f2e3d4c seq=912 produced=40210 ring_dropped=0 unsent=0 reason=time
 *
 * produced is every sample the run took: the samples drained (the next `first`) plus ring_dropped; reason is
 * stopped (`profile stream stop`), time (its SECONDS ran out) or error (the network went away). So a receiver
 * that got R sample lines accounts for all of them when R + ring_dropped + unsent == produced; any rest was
 * lost between the kernel's queue and the receiver. With a pid filter only that task's samples are drained
 * (and counted); ring_dropped counts every sample the rings refused, of any task.
 *
 * Numbers are decimal without leading zeros, fields are separated by exactly one space, and every line ends
 * with "\n": the parser accepts only that, as the raw format's does. */
#ifndef KERNEL_PROFILER_STREAM_CODEC_H
#define KERNEL_PROFILER_STREAM_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/profiler.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/run.h"

#define PROFILE_STREAM_VERSION 2
#define PROFILE_STREAM_DATAGRAM_MAX 1472   /* NET_UDP_MAX: a datagram never needs IP fragments */
#define PROFILE_STREAM_HEARTBEAT_MS 1000   /* a datagram at least this often, samples or not */
#define PROFILE_STREAM_END_COPIES 3
#define PROFILE_STREAM_DATAGRAM_SAMPLES 99 /* at most per datagram: samples= is packed with two digits reserved */
#define PROFILE_STREAM_SECONDS_MAX 86400   /* SECONDS up to a day; 0 means until `profile stream stop` */
#define PROFILE_STREAM_SRC_PORT 40001      /* the kernel's local port for stream datagrams */
#define PROFILE_STREAM_HEADER_MAX 400      /* longer than the longest header line can be */

enum profile_stream_reason {
    PROFILE_STREAM_STOPPED,
    PROFILE_STREAM_TIME,
    PROFILE_STREAM_ERROR,
};

struct profile_stream_header {
    uint32_t run;
    uint64_t seq;
    uint64_t first;
    uint32_t samples;
    uint64_t ring_dropped;
    uint64_t unsent;
    int64_t time_ns;
    char source[PROFILE_RAW_SOURCE_MAX];         /* 1..63 printable characters, no space */
    uint64_t period;                             /* the nominal period, in unit */
    enum profile_unit unit;
    uint32_t cpus;
    char build_id[2 * PROFILE_BUILD_ID_MAX + 1]; /* lowercase hex, "" for none */
};

struct profile_stream_end {
    uint32_t run;
    uint64_t seq;
    uint64_t produced;
    uint64_t ring_dropped;
    uint64_t unsent;
    enum profile_stream_reason reason;
};

/* The reason's word: "stopped", "time", "error". */
const char *profile_stream_reason_word(enum profile_stream_reason reason);

/* Each writes its whole line, newline included, into buf and returns its length; 0 when it does not fit in
 * cap (with a NUL) or a field cannot be written validly (a bad source word or build id, samples over
 * PROFILE_STREAM_DATAGRAM_SAMPLES, an unknown reason). */
size_t profile_stream_format_header(const struct profile_stream_header *h, char *buf, size_t cap);
size_t profile_stream_format_end(const struct profile_stream_end *e, char *buf, size_t cap);

/* Each parses the len bytes at line as one complete line of its kind; false for anything else. */
bool profile_stream_parse_header(const char *line, size_t len, struct profile_stream_header *out);
bool profile_stream_parse_end(const char *line, size_t len, struct profile_stream_end *out);

/* A whole datagram: a header and exactly its sample lines (each handed to on_sample, when not NULL, in
 * order), or one end line. False for anything else -- over PROFILE_STREAM_DATAGRAM_MAX, a line of the wrong
 * kind or malformed, more or fewer sample lines than the header says, anything after them. */
struct profile_stream_datagram {
    bool is_end;
    struct profile_stream_header header; /* !is_end */
    struct profile_stream_end end;       /* is_end */
};
typedef void (*profile_stream_sample_fn)(void *arg, const struct profile_raw_sample *s);
bool profile_stream_parse_datagram(const char *data, size_t len, struct profile_stream_datagram *out,
                                   profile_stream_sample_fn on_sample, void *arg);

/* ---- the packer and the accounting ------------------------------------------------------------------ */

/* Sends one datagram; false when it could not (its samples are then counted unsent). */
typedef bool (*profile_stream_send_fn)(void *arg, const char *data, size_t len);

/* One stream's state on the sending side. Written only by the task that runs the stream; the figures are
 * read by `profile stream` for its status line, a word at a time. */
struct profile_streamer {
    struct profile_stream_header fixed;  /* run, source, period, unit, cpus, build_id: the same in every datagram */
    profile_stream_send_fn send;
    void *send_arg;
    /* the accounting, cumulative over the run */
    uint64_t seq;            /* the next datagram's number */
    uint64_t drained;        /* samples drained: the next sample's index */
    uint64_t sent;           /* samples in datagrams that were sent */
    uint64_t unsent;         /* samples in datagrams whose send failed */
    uint64_t ring_dropped;   /* the rings' drop counts, as last read */
    uint64_t datagrams;      /* datagrams sent, heartbeats and end copies included */
    uint64_t send_failures;  /* datagrams that could not be sent */
    int64_t last_send_ns;    /* when the last datagram was sent (or the stream began) */
    /* the datagram being packed: its header is written when it is begun, its count when it is sent */
    bool open;
    size_t reserved;         /* bytes before the body: one spare, then the header as begun */
    size_t samples_at;       /* where in buf the header's two reserved samples= digits are */
    size_t body_len;
    uint32_t pending;        /* sample lines in the body */
    struct profile_stream_header next; /* its header's fields, taken when it was begun */
    char buf[PROFILE_STREAM_DATAGRAM_MAX + 1];
};

/* Begins the accounting of a stream of run (its source, period and CPUs), numbered run_id, with the build id
 * build_id (hex, "" for none), sending through send. */
void profile_streamer_init(struct profile_streamer *s, uint32_t run_id, const struct profile_run *run,
                           const char *build_id, profile_stream_send_fn send, void *send_arg, int64_t now_ns);
/* Packs one record as a sample line, sending the datagram first when the line does not fit. */
void profile_streamer_add(struct profile_streamer *s, const struct profile_record *rec, int64_t now_ns);
/* Takes every record now in run's rings (profiler_drain, consuming them) and packs those of the run that pass
 * filter; then reads the rings' drop count (profiler_drops) and sends what is packed. */
void profile_streamer_drain(struct profile_streamer *s, struct profile_run *run, const struct profile_filter *filter,
                            int64_t now_ns);
/* Sends the datagram being packed, if it holds any sample. */
void profile_streamer_flush(struct profile_streamer *s, int64_t now_ns);
/* Sends a heartbeat (samples=0) when nothing has been sent for PROFILE_STREAM_HEARTBEAT_MS. */
void profile_streamer_heartbeat(struct profile_streamer *s, int64_t now_ns);
/* Sends what is packed and then the end line PROFILE_STREAM_END_COPIES times; the end's numbers into *end. */
void profile_streamer_finish(struct profile_streamer *s, enum profile_stream_reason reason, int64_t now_ns,
                             struct profile_stream_end *end);
/* Every sample the run took so far: drained + ring_dropped. */
uint64_t profile_streamer_produced(const struct profile_streamer *s);

/* ---- the command's words and the destination rule -------------------------------------------------------- */

enum profile_stream_action {
    PROFILE_STREAM_STATUS, /* `profile stream` */
    PROFILE_STREAM_STOP,   /* `profile stream stop` */
    PROFILE_STREAM_START,  /* `profile stream HOST:PORT|PORT [SECONDS] [pid|all]` */
};

struct profile_stream_request {
    enum profile_stream_action action;
    bool has_host; /* false: PORT alone, to the address the request came from */
    uint32_t host;
    uint16_t port;
    uint32_t seconds; /* 0: until stopped */
    struct profile_filter filter;
};

/* `profile stream ...` (argv[0] "profile", argv[1] "stream"). False for anything malformed, out of range or
 * extra; *req is then unspecified. */
bool profile_stream_parse_args(int argc, char **argv, struct profile_stream_request *req);

/* Where a request comes from: the console, or the UDP shell from ip, keyed (its MAC checked) or not. */
struct profile_stream_origin {
    bool udp;
    bool keyed;
    uint32_t ip;
};

/* The destination of a start request from origin, into *dst: NULL when it may go there, else the one-line
 * reason (without newline) it may not -- PORT alone on the console, an unkeyed request to another address
 * than its own, an address the UDP shell's allowlist does not permit (allowed(ip) false). */
const char *profile_stream_destination(const struct profile_stream_request *req,
                                       const struct profile_stream_origin *origin, bool (*allowed)(uint32_t ip),
                                       uint32_t *dst);
/* Whether origin may stop a stream that goes to dst_ip: the console and keyed requests any, an unkeyed one
 * only its own. */
bool profile_stream_may_stop(const struct profile_stream_origin *origin, uint32_t dst_ip);

#endif
