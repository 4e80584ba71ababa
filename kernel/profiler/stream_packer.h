/* kernel/profiler/stream_packer.h: the sending side of `profile stream` (kernel/profiler/stream_packer.c) -- a
 * run's records packed as raw sample lines into datagrams of the wire format (kernel/profiler/stream_codec.h),
 * with the accounting every header carries (first, ring_dropped, unsent), the heartbeat and the end line.
 * Nothing here sends or sleeps: the caller hands in a send function and the clock, so the host tests drive it. */
#ifndef KERNEL_PROFILER_STREAM_PACKER_H
#define KERNEL_PROFILER_STREAM_PACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/profiler/run.h"
#include "kernel/profiler/stream_codec.h"

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

#endif
