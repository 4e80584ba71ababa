/* kernel/profiler/pprof.h: a profile of every CPU for some seconds, as pprof's profile.proto (gzipped when it
 * pays) -- what the HTTP server (kernel/httpd) sends for /debug/pprof/profile?seconds=N -- or, of the same code
 * with a wall session, every task's wall time (/debug/fgprof?seconds=N: kernel/profiler.h's wall run, each task
 * every PROFILE_WALL_PERIOD_MS whatever its state, sample types samples/count and wall/nanoseconds, the state and
 * what a waiting task waits on as the labels `state` and `waiting_on`). The samples are folded
 * in the kernel while the window runs, by exact call chain, label set, marks and CPU, so what it costs grows
 * with the distinct stacks, not with the samples; after the stop the chains are resolved against the baked
 * symbols and encoded with the kernel as the one mapping (its build id), functions, locations with their
 * addresses (so `go tool pprof build/kprof.elf URL` adds source lines), the label sets, the marks and `cpu`
 * as sample labels, sample types samples/count and cpu/nanoseconds (the counter's event and period on the
 * counter), and the duration, period, drops and source in the comments. Its window is a session
 * (kernel/profiler/session.h) in a task of its own, held as "an HTTP profile (/debug/pprof/profile)" (or "an HTTP
 * wall profile (/debug/fgprof)"): the HTTP worker that asked is not held by it. Both kinds share the one
 * profiler: while either runs, the other is refused busy like any profile. */
#ifndef KERNEL_PROFILER_PPROF_H
#define KERNEL_PROFILER_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/block_profile.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/session.h"

#define PPROF_SECONDS_DEFAULT 30 /* Go's net/http/pprof default */
#define PPROF_SECONDS_MAX 300    /* the longest window one request may ask for */

/* What a profile samples: the CPUs (their tick or counter), or every task's wall time. */
enum pprof_kind {
    PPROF_CPU,
    PPROF_WALL,
};

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

/* What a flame graph asks of a profile besides its kind and seconds (/debug/flamegraph): the samples it keeps (a
 * label filter, by_label false: all), the filter's words for its head, and the number its pprof is kept by. */
struct pprof_flame_ask {
    struct profile_filter filter;
    char tag[LABEL_KEY_MAX + LABEL_VALUE_MAX + 2]; /* "key=value", "" for none */
    uint32_t run;
};

/* A flame graph's label filter from the URL's words, "key:value" (a ':' where the console's filter has '=', which
 * a query's own): ask's filter and tag set, true; false when it is not a label pair (ask untouched). */
bool pprof_flame_tag(const char *key_colon_value, struct pprof_flame_ask *ask);

/* An HTTP profile while it runs: its session (whose consumer folds the records), the fold, what the encoder says
 * about the run, and the caller's. Nothing in it is the caller's to touch until done. */
struct pprof_fold;
struct pprof_profile {
    enum pprof_kind kind;
    struct profile_session session;
    struct pprof_fold *fold;
    struct pprof_run_info info;
    char source_word[PROFILE_RAW_SOURCE_MAX];
    bool (*cancelled)(void *arg); /* before every sleep of the window: true ends it now (its client is gone) */
    void (*done)(struct pprof_profile *p, int status, struct pprof_body *body);
    void *arg;
    bool was_cancelled;
    bool flame;                    /* the body is a flame graph (kernel/profiler/flame.h), the pprof in kept */
    struct pprof_flame_ask ask;    /* a flame graph's */
    struct pprof_body kept;        /* a flame graph's: the pprof of the same fold, done's to take or free */
};

/* Task context. Claims the profiler for a window of seconds (1..PPROF_SECONDS_MAX; 0 is taken as 1, more as the
 * maximum: the caller refuses what it will not serve) of the kind asked, over every CPU (or every task), and
 * runs it in a task of its own, which folds as it drains, stops, gives the profiler back, encodes
 * (kernel/profiler/pprof_fold.h, pprof_encode.h) and calls done(p, status, body) last: PPROF_OK with the body
 * (done gives it back with pprof_body_free), PPROF_CANCELLED or PPROF_NO_MEMORY with it empty. The caller goes
 * on meanwhile. The result here: PPROF_OK (it runs: p is the task's until done), PPROF_BUSY (busy_text, when
 * not NULL, holds the session's one busy line, "profile: busy: HOLDER, N s left") or PPROF_NO_MEMORY; done is
 * not called for those. cancelled may be NULL. */
int pprof_profile_begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds, bool (*cancelled)(void *arg),
                        void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                        char *busy_text, size_t busy_cap);
/* The same for a flame graph of the samples ask->filter keeps: done's body is its SVG, and p->kept the pprof
 * profile of the very same fold (done takes it, or frees it with pprof_body_free). Held as "an HTTP flame graph
 * (/debug/flamegraph)". */
int pprof_flame_begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds,
                      const struct pprof_flame_ask *ask, bool (*cancelled)(void *arg),
                      void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                      char *busy_text, size_t busy_cap);
/* The same, run in the caller's task: the result is PPROF_OK with *out filled, or as above with *out empty. */
int pprof_profile_take(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds, bool (*cancelled)(void *arg),
                       void *arg, struct pprof_body *out, char *busy_text, size_t busy_cap);
void pprof_body_free(struct pprof_body *body);

/* The running kernel as a profile's mapping (the loadable segment that holds its text, to the text's end; its
 * build id in hex into build_id, "" when it has none): what every profile the kernel serves names. */
void pprof_kernel_mapping(struct pprof_mapping *m, char *build_id, size_t cap);

/* ---- the profiles that are snapshots (kernel/profiler/pprof_snapshot.c) --------------------------------------
 * No profiler, no window: a copy of the task table or of a block table, taken in the caller's task whatever
 * profile runs, and encoded against the baked symbols with the kernel's mapping. Each result is PPROF_OK with
 * *out filled (pprof_body_free gives it back) or PPROF_NO_MEMORY with it empty. */

/* Every task now (kernel/profiler/goroutine.h, task_dump.h): debug 0 the goroutine profile as pprof (gzipped when
 * that is smaller), 1 Go's text of its counts, 2 every task as `tasks` prints it (text: never gzipped). */
int pprof_goroutine(int debug, struct pprof_body *out);
/* Who holds the kernel heap, by allocation chain (kernel/profiler/heap_profile.h): debug 0 pprof with Go's four
 * sample types, inuse_space first (allocs false: /debug/pprof/heap) or alloc_space first (/debug/pprof/allocs);
 * debug 1 Go's legacy text form. */
int pprof_heap(bool allocs, int debug, struct pprof_body *out);
/* The profiles of a block table (kernel/profiler/block_profile.h): where tasks blocked (the block table, Go's
 * block profile) and where CPUs spun on spinlocks (the lock table, kernel/profiler/lock_sites.h, Go's mutex
 * profile). */
enum pprof_delays { PPROF_BLOCK, PPROF_MUTEX };
/* Since boot, as pprof (gzipped when that is smaller), or with text Go's debug=1 text (never gzipped). */
int pprof_delays(enum pprof_delays which, bool text, struct pprof_body *out);
/* Over a window: pprof_delays_begin takes the first snapshot (earlier.taken_ns is when); pprof_delays_end the
 * second, and encodes their difference -- or, cancelled, only gives the first back and answers
 * PPROF_CANCELLED. */
struct pprof_delays_window {
    enum pprof_delays which;
    bool text;
    struct block_snapshot earlier;
};
int pprof_delays_begin(struct pprof_delays_window *w, enum pprof_delays which, bool text);
int pprof_delays_end(struct pprof_delays_window *w, bool cancelled, struct pprof_body *out);

#endif
