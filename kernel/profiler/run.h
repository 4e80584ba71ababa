/* kernel/profiler/run.h: run control's consumer side (kernel/profiler/run.c) -- what every stage that takes a
 * run's samples shares: the filter, the one walk of the rings (profiler_drain), the one sum of their drops
 * (profiler_drops), and the one window (profiler_window) that `profile` and the stream's task both sleep
 * through, draining as it runs. Starting and stopping a run is kernel/profiler.h, beside the sample path whose
 * statics they write. The fold, the raw lines and the stream's packer are take callbacks of profiler_drain. */
#ifndef KERNEL_PROFILER_RUN_H
#define KERNEL_PROFILER_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler_ring.h"

/* Which samples of a run a consumer wants. */
struct profile_filter {
    bool by_pid; /* false: every task */
    uint32_t pid;
    bool by_label; /* true: only samples whose label set has the pair label (span=N: whose span is N) */
    struct label_pair label;
};

/* rec's label set, when it is still the one the sample saw (its generation matches the record's), else NULL.
 * Every reader of a record's set goes through here. On the drain's path the set always is still its own (the
 * pool frees a set only after the records that hold it are drained); the check is for a record read after it
 * was drained, or committed after its run's last drain, whose slot the pool may have freed and reused. */
const struct label_set *profile_record_labels(const struct profile_record *rec);

/* Whether rec's sample carried the pair: in its label set, or, for span=N, as its span. */
bool profile_record_has_label(const struct profile_record *rec, const struct label_pair *pair);

/* Whether rec belongs to run and passes filter (NULL: every record of the run): a record of an earlier run is
 * a straggler, committed after this one reset the ring. */
bool profile_record_wanted(const struct profile_record *rec, uint32_t run, const struct profile_filter *filter);

/* One wanted record, valid only during the call: the ring may reuse its slot as soon as take returns. */
typedef void (*profiler_take_fn)(void *arg, const struct profile_record *rec);

/* Task context, the rings' one consumer. Takes every record now in each of run's rings out of it, CPU by CPU,
 * oldest first, and hands those that profile_record_wanted() to take(arg, rec), each once; the others are
 * consumed unseen. Only what is in a ring when its turn comes: what commits meanwhile waits for the next drain. */
void profiler_drain(struct profile_run *run, const struct profile_filter *filter, profiler_take_fn take, void *arg);

/* The records the rings of run refused because they were full, every CPU's summed, since the run began. */
uint64_t profiler_drops(const struct profile_run *run);

/* Whether a window should end now; window_over says its time has run out. NULL stands for "when its time is
 * over". The stream's task also ends on a stop asked for and on a network gone, and names why. */
typedef bool (*profiler_window_stop_fn)(void *arg, bool window_over);
/* One step of the window, after each sleep: typically a profiler_drain. */
typedef void (*profiler_window_step_fn)(void *arg);

/* Task context. The window of run, window_ms from its start (0: until should_stop says so): checks
 * should_stop, sleeps PROFILE_DRAIN_MS (the last sleep cut short at the window's end) and calls step, until
 * should_stop(arg, window_over) is true -- checked before every sleep, the first before the first. The run is
 * still going when it returns: the caller stops it and drains once more. */
void profiler_window(const struct profile_run *run, uint32_t window_ms, profiler_window_stop_fn should_stop,
                     profiler_window_step_fn step, void *arg);

#endif
