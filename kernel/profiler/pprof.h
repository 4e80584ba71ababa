/* kernel/profiler/pprof.h: a profile of every CPU for some seconds, as pprof's profile.proto (gzipped when it
 * pays) -- what the HTTP server (kernel/httpd) sends for /debug/pprof/profile?seconds=N. The samples are folded
 * in the kernel while the window runs, by exact call chain, label set, marks and CPU, so what it costs grows
 * with the distinct stacks, not with the samples; after the stop the chains are resolved against the baked
 * symbols and encoded with the kernel as the one mapping (its build id), functions, locations with their
 * addresses (so `go tool pprof build/kprof.elf URL` adds source lines), the label sets, the marks and `cpu`
 * as sample labels, sample types samples/count and cpu/nanoseconds (the counter's event and period on the
 * counter), and the duration, period, drops and source in the comments. While its window runs it is the
 * profiler's holder (kernel/profiler/run.h): "an HTTP profile (/debug/pprof/profile), N s left". */
#ifndef KERNEL_PROFILER_PPROF_H
#define KERNEL_PROFILER_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPROF_SECONDS_DEFAULT 30 /* Go's net/http/pprof default */
#define PPROF_SECONDS_MAX 300    /* the longest window one request may ask for */

enum pprof_status {
    PPROF_OK = 0,
    PPROF_BUSY = -1,      /* another profile (the console's, a stream, another request) holds the profiler */
    PPROF_NO_MEMORY = -2, /* the fold's table, the encoder's buffer or the rings could not be allocated */
    PPROF_CANCELLED = -3, /* the hook asked to end it early (the client went away): no body */
};

/* The encoded profile: data is on the kernel heap, len bytes; gzipped when that made it smaller. */
struct pprof_body {
    uint8_t *data;
    size_t len;
    bool gzipped;
};

/* Called in task context after each drain of the window (every PROFILE_DRAIN_MS): the caller's chance to
 * serve what else waits (and to answer it busy), and to say whether the profile should end now (true: its
 * client is gone). */
typedef bool (*pprof_window_hook)(void *arg);

/* Task context. Claims the profiler, runs a window of seconds (1..PPROF_SECONDS_MAX; 0 is taken as 1, more as
 * the maximum: the caller refuses what it will not serve) over every CPU, folding as it drains, stops, gives
 * the profiler back and encodes (kernel/profiler/pprof_fold.h, pprof_encode.h). PPROF_OK with *out filled
 * (pprof_body_free gives it back); otherwise *out is empty, and for PPROF_BUSY busy_text (when not NULL)
 * holds one line saying what holds the profiler. */
int pprof_profile_take(uint32_t seconds, pprof_window_hook hook, void *hook_arg, struct pprof_body *out,
                       char *busy_text, size_t busy_cap);
void pprof_body_free(struct pprof_body *body);

#endif
