/* kernel/workload/span_log.h: the span ids and span logs of the known workloads (`burn ... spans`, `work`) --
 * loads that serve requests, give each request a span of its own (kernel/labels.h's numeric label) and log it, so
 * a profile's samples can be held to what really happened, request by request. A span log is a ring of whole
 * entries that tasks append to without a lock and a shell reads back a page at a time (`burn spans FROM`,
 * `work spans FROM`), told how many entries it lost when it fell behind. Any task may append; nothing here runs
 * in interrupt context. */
#ifndef KERNEL_WORKLOAD_SPAN_LOG_H
#define KERNEL_WORKLOAD_SPAN_LOG_H

#include <stdatomic.h>
#include <stdint.h>

#include "kernel/lib/sink.h"

#define SPAN_LOG_PER_READ 64 /* entries one read prints: a page fits a UDP shell reply */

/* One entry: a request's span, the task that served it and two figures in nanoseconds whose meaning is the log
 * owner's (burn: the clock just before and just after the task's span changed; work: the request's compute and
 * wait). Entry i sits at [i % capacity]; seq is i + 1 once it is whole (0 or older while it is written), so a
 * reader takes only whole entries. */
struct span_entry {
    _Atomic uint64_t seq;
    uint32_t pid;
    uint64_t span;
    int64_t ns[2];
};

/* A log over a caller's array of capacity entries (more than SPAN_LOG_PER_READ): the last capacity -
 * SPAN_LOG_PER_READ entries can always be read, the rest of the ring is the room a page being printed needs
 * while tasks append behind it. Indexes count from the first entry since boot and never wrap in practice
 * (2^64 entries). Zero-initialised but for entries and capacity: SPAN_LOG_OVER(array). */
struct span_log {
    struct span_entry *entries;
    uint64_t capacity;
    atomic_ullong next; /* entries begun */
};
#define SPAN_LOG_OVER(array) { (array), sizeof(array) / sizeof((array)[0]), 0 }

/* A span id no request since boot has had, shared by every workload so their spans never meet; never 0 (a task
 * whose span is 0 has none). */
uint64_t span_new(void);

/* Where the next entry will go: a reader that wants only what comes from now on starts here. */
uint64_t span_log_next(struct span_log *log);

/* Appends one whole entry. Any number of tasks at once; never blocks. */
void span_log_add(struct span_log *log, uint32_t pid, uint64_t span, int64_t ns0, int64_t ns1);

/* `NAME spans FROM`: up to SPAN_LOG_PER_READ whole entries from index FROM on, one line each,
 * "span PID SPAN NS0 NS1", then "NAME spans: next N lost M" -- where to read on, and how many entries from FROM
 * were overwritten before this read (a reader that falls behind is told, never silently given a shorter log).
 * An entry still being written ends the page: the next read starts at it. */
void span_log_print(struct span_log *log, uint64_t from, const char *name, struct sink *out);

#endif
