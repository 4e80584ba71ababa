/* kernel/profiler/stream_task.h: the running stream (kernel/profiler/stream_task.c) -- the kernel task that
 * holds the profiler for a stream's life and sends its samples as datagrams of kernel/profiler/stream_codec.h,
 * and what the `profile stream` command (kernel/shell/cmd_profile_stream.c) asks of it: start one, ask it to
 * stop, read its figures. One stream at a time. */
#ifndef KERNEL_PROFILER_STREAM_TASK_H
#define KERNEL_PROFILER_STREAM_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/profiler/run.h"
#include "kernel/profiler/stream_codec.h"

enum profile_stream_start_status {
    PROFILE_STREAM_STARTED,
    PROFILE_STREAM_BUSY,          /* a stream runs, or another is starting or stopping */
    PROFILE_STREAM_NO_PORT,       /* PROFILE_STREAM_SRC_PORT could not be bound (too many ports) */
    PROFILE_STREAM_PROFILER_BUSY, /* a one-shot profile holds the profiler */
    PROFILE_STREAM_NO_MEMORY,     /* the profiler's rings could not be allocated */
    PROFILE_STREAM_NO_TASK,       /* the stream's task could not be spawned */
};

/* Task context. Starts a stream of the samples (a wall run's when wall) that pass filter to dst_ip:dst_port from
 * PROFILE_STREAM_SRC_PORT, for seconds (0: until profile_stream_stop), numbered *run_id (random); its task
 * drains the rings every PROFILE_DRAIN_MS, sends a heartbeat every PROFILE_STREAM_HEARTBEAT_MS and the end
 * line at the close, which is its time running out, a stop asked for, or the network going away. Whether the
 * destination is allowed, the network is there and the pid exists is the caller's to check first. */
enum profile_stream_start_status profile_stream_start(uint32_t dst_ip, uint16_t dst_port, uint32_t seconds,
                                                      const struct profile_filter *filter, bool wall,
                                                      uint32_t *run_id);

/* Task context: asks the running stream to end, and returns once its task has sent the end line and given
 * the profiler back. Only while profile_stream_figures() says running. */
void profile_stream_stop(void);

/* The stream's figures, each read a word at a time while its task may be writing them: those of the running
 * stream, or of the last one when it has ended. */
struct profile_stream_figures {
    bool running;         /* its task runs the stream */
    bool ended;           /* a stream has run and ended: produced, reason and ended_ns are its */
    uint32_t run;         /* the stream's number, as its datagrams carry it */
    const char *source;   /* the sample source's word, as in its headers */
    uint32_t dst_ip;
    uint16_t dst_port;
    int64_t started_ns, ended_ns;
    uint64_t drained, sent, unsent, ring_dropped, datagrams; /* struct profile_streamer's accounting */
    unsigned task_cpu;    /* the CPU the task runs on */
    uint64_t task_ticks;  /* ticks that found the task running ... */
    uint64_t cpu_ticks;   /* ... of its CPU's ticks, since it began */
    uint32_t slow_ms;     /* profile.stream_slow_ms=, 0 when not slowed */
    uint64_t slowed;      /* drains delayed by it */
    uint64_t produced;    /* ended: every sample the run took */
    enum profile_stream_reason reason; /* ended: why */
};
void profile_stream_figures(struct profile_stream_figures *f);

/* How long, with the rings at PROFILE_RING_RECORDS records a CPU, the stream may take to pack and send what one
 * drain took while the rings record the next, at the counter's rate of 1 kHz per CPU: the two together must fit
 * a CPU's ring. Stated in the start line and docs/profiler.md ("two profiles" of headroom). */
#define PROFILE_STREAM_HEADROOM_MS_AT_1KHZ PROFILE_RING_RECORDS
/* The same for the rings this kernel has (profile.ring_records= makes them smaller): a record a millisecond. */
static inline uint32_t profile_stream_headroom_ms(void) { return profiler_ring_records(); }

/* Boot: profile.stream_slow_ms= from the kernel command line (NULL when absent), a test knob: the stream's task
 * waits that long (0..PROFILE_STREAM_SLOW_MS_MAX) after each drain of the window, a sender slowed on purpose, so a test can
 * show the rings' headroom holding. A bad value is reported in one line and ignored. */
#define PROFILE_STREAM_SLOW_MS_MAX 2000
void profile_stream_set_slow(const char *slow_ms_option);

#endif
