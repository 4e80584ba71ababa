/* kernel/profiler/session.h: a profiling session -- one run's whole life, written once (kernel/profiler/session.c):
 * claim the profiler and start the run, say who holds it, the window (sleep PROFILE_DRAIN_MS, drain every CPU's
 * ring into the consumer), stop, the last drain, count the label sets refused meanwhile, give the profiler
 * back. What a kind of profile does with the records is its consumer: the console's `profile` (a capture, then
 * the fold or the raw lines: kernel/shell/cmd_profile.c), the HTTP profile (the pprof fold:
 * kernel/profiler/pprof.c) and the stream (datagrams: kernel/profiler/stream_task.c). A session runs inline, in
 * its caller's task (the console), or in a task of its own that calls back when it is done (HTTP, stream).
 *
 * The holder: while a session holds the profiler, every other start is refused with one line naming it,
 * "WHO: busy: HOLDER, N s left" (the seconds only for a window with an end), whoever asks -- the console, the UDP
 * shell, the HTTP server (its 429 and Retry-After), a stream's start. */
#ifndef KERNEL_PROFILER_SESSION_H
#define KERNEL_PROFILER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/raw.h"
#include "kernel/profiler/run.h"

#define PROFILE_HOLDER_MAX 96 /* the holder's text, and its NUL */

struct profile_session;

/* What one kind of profile does with a session's records. take is the only member it must have; the rest may be
 * NULL. Every call is in the session's task, in this order: take for every wanted record of a drain, then
 * after_drain; should_stop before every sleep of the window; after the stop, stopped, then the last drain (take,
 * after_drain), then finish -- all while the session holds the profiler. */
struct profile_consumer {
    profiler_take_fn take;                                            /* (s->arg, record) */
    void (*after_drain)(struct profile_session *s);                   /* after each drain: a flush, a heartbeat */
    bool (*should_stop)(struct profile_session *s, bool window_over); /* NULL: when the window's time is over */
    void (*stopped)(struct profile_session *s);                       /* the run stopped; the last drain is next */
    void (*finish)(struct profile_session *s);                        /* the last drain done; run still readable */
    bool wall; /* its records are a wall run's (kernel/profiler.h: every task every PROFILE_WALL_PERIOD_MS) */
};

struct profile_session {
    struct profile_run run;
    const struct profile_consumer *consumer;
    void *arg;                           /* the consumer's, as take gets it */
    struct profile_filter filter;        /* what every drain hands on */
    uint32_t window_ms;                  /* 0: until should_stop says so */
    int64_t drain_ns;                    /* when the current drain began (the clock a consumer stamps with) */
    char build_id[2 * PROFILE_BUILD_ID_MAX + 1]; /* the running kernel's, in hex; "" when it has none */
    uint64_t labels_dropped;             /* label sets refused (the pool full) from the start to the finish */
    uint64_t labels_dropped_before;
    void (*done)(struct profile_session *s); /* a session in its own task: called last, the profiler given back */
};

/* Task context. Claims the profiler and starts a run of window_ms (0: until should_stop), drained with filter
 * (NULL: every record) into consumer, held by holder (copied, cut to PROFILE_HOLDER_MAX - 1). PROFILER_OK, or
 * PROFILER_BUSY or PROFILER_NO_MEMORY, and then nothing is held. */
int profile_session_start(struct profile_session *s, const struct profile_consumer *consumer, void *arg,
                          const struct profile_filter *filter, uint32_t window_ms, const char *holder);
/* Task context, after a start: the window, the stop, the last drain, finish, and the profiler given back. */
void profile_session_run(struct profile_session *s);
/* profile_session_run in a task of its own, named name, then done(s) (which may free s), then the task exits.
 * False when no task could be made: the run is stopped and the profiler given back, and done is not called. */
bool profile_session_spawn(struct profile_session *s, const char *name, void (*done)(struct profile_session *s));

/* Any context but an interrupt's. While a session holds the profiler: "HOLDER, N s left" (or "HOLDER" for a
 * window without an end) into buf, *seconds_left (when not NULL) the seconds to its end, rounded up (0 for
 * none), and true. False when no session holds it (free, or a run started outside a session). A line, read a
 * word at a time while the holder may change it. */
bool profile_session_holder(char *buf, size_t cap, uint32_t *seconds_left);
/* The one busy line: "WHO: busy: HOLDER, N s left", or "WHO: busy" when no holder is known. */
void profile_session_busy_line(const char *who, char *buf, size_t cap);

#endif
