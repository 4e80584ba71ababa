/* kernel/profiler/stream_codec.h: the wire format of `profile stream` -- a run's samples sent as UDP datagrams while
 * it runs -- written and read by kernel/profiler/stream_codec.c: the datagram's header and end lines, formatted and
 * parsed back strictly, and whole datagrams parsed. Portable: the host tests and the fuzz target drive it. The
 * packing of records into datagrams and its accounting is kernel/profiler/stream_packer.h, the command's words
 * and where a stream may go kernel/profiler/stream_request.h, the task that runs a stream
 * kernel/profiler/stream_task.c, the command kernel/shell/cmd_profile_stream.c.
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
/* The same, and *samples_at (when not NULL) the offset of samples='s digits: the packer writes the count last. */
size_t profile_stream_format_header_at(const struct profile_stream_header *h, char *buf, size_t cap,
                                       size_t *samples_at);
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

#endif
