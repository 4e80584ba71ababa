/* kernel/profiler/capture.h: the window's capture (kernel/profiler/capture.c) -- where the `profile` command
 * puts each CPU's records while its window runs, so that the rings hold up at any rate and nothing but a copy
 * runs inside the window it is profiling: the fold, the symbol lookups and the raw lines (formatting, the
 * console or the network) come after the stop, and so never show up in the profile itself.
 *
 * It is one ring of records, filled in drain order (every 50 ms, CPU by CPU) and read once after the stop,
 * through a profile_run that names it as its only ring: the fold and the raw lines take their records from
 * it with the same profiler_drain they use on the CPUs' rings, and see them in the order they would have.
 * Its room is sized before the window, from the run's source and the window's length, and bounded. Where the
 * window would make more records than that room holds (a machine of many CPUs on the counter), the capture
 * thins them evenly instead of keeping the window's start: each CPU's 1st wanted record, its (N+1)th, and so on,
 * each kept one weighing N, so the whole window and every CPU are in it and the percentages are unchanged; the
 * report says so. A record that still finds it full is a drop of the copy's, apart from the rings' (the
 * header's drops are the per-CPU buffers'): the report says it in a line of its own, and the raw trailer's
 * dropped= counts both. */
#ifndef KERNEL_PROFILER_CAPTURE_H
#define KERNEL_PROFILER_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/profiler.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler_ring.h"

/* The most the capture ever takes: what 64 CPUs sampling at 1 kHz make in the longest window (2000 ms),
 * 131072 records of 112 bytes, 14 MiB. */
#define PROFILE_CAPTURE_MAX_RECORDS (1u << 17)
/* The counter counts unhalted core cycles and its period is set from the TSC's rate: a core that runs faster
 * than the TSC (turbo) overflows that much more often. The capture allows for a core twice as fast. */
#define PROFILE_CAPTURE_COUNTER_HEADROOM 2

struct profile_capture {
    struct profile_ring ring;   /* the copies, oldest first; a power of two of records, on the heap */
    uint64_t dropped;           /* wanted records that found it full */
    uint32_t keep_one_in;       /* 1: every wanted record; N: each CPU's every Nth, from its first */
    uint64_t thinned;           /* wanted records left out by that */
    uint32_t *seen;             /* keep_one_in > 1: wanted records so far, per CPU (MAX_CPUS, on the heap) */
    struct profile_run replay;  /* the run as the consumers see it after the stop: this ring its only one */
};

/* The records a capture makes room for, for a window of window_ms on ncpus CPUs sampling at tick_hz, or on
 * their counters (counter_period_cycles, 0 when there is none, at cycles_per_ms) where that is faster, with
 * PROFILE_CAPTURE_COUNTER_HEADROOM: the window and one drain step more, rounded up to a power of two, at
 * least one ring's worth and at most PROFILE_CAPTURE_MAX_RECORDS. */
uint32_t profile_capture_size(unsigned ncpus, unsigned tick_hz, uint64_t counter_period_cycles,
                              uint64_t cycles_per_ms, uint32_t window_ms);
/* The records such a window would make, unbounded: what profile_capture_size rounds up and caps. */
uint64_t profile_capture_want(unsigned ncpus, unsigned tick_hz, uint64_t counter_period_cycles,
                              uint64_t cycles_per_ms, uint32_t window_ms);
/* 1 when want records fit in room, else the N for which keeping every Nth of them does: want / room rounded up. */
uint32_t profile_capture_keep_one_in(uint64_t want, uint32_t room);

/* Task context, before the run starts, so that neither the allocation nor the first touch of its pages
 * (slow under a shadow-paging hypervisor) is part of the profile: room, every page touched, for a window of
 * window_ms on the CPUs online now, at the tick's rate or the counter's (asking pmu_probe(), as the run's
 * start will), as profile_capture_size() says -- or, short of memory, the largest half of it down to one
 * ring's worth; false when not even that fits. Where the window wants more than the room it got, it thins
 * (keep_one_in, profile_capture_keep_one_in). */
bool profile_capture_create(struct profile_capture *cap, uint32_t window_ms);
/* The records a wall run's capture makes room for: tasks each PROFILE_WALL_PERIOD_MS for the window and one drain
 * step more, rounded up as profile_capture_size() does. */
uint32_t profile_capture_size_wall(unsigned tasks, uint32_t window_ms);
/* profile_capture_create for a wall run of window_ms sweeping about tasks tasks. */
bool profile_capture_create_wall(struct profile_capture *cap, uint32_t window_ms, unsigned tasks);
void profile_capture_destroy(struct profile_capture *cap);

/* A drain's take (profiler_take_fn) into a capture (cap, a struct profile_capture): the record copied
 * (thinned: every keep_one_in-th of its CPU's, its period multiplied by keep_one_in), or counted in dropped when
 * the capture is full. */
void profile_capture_take(void *cap, const struct profile_record *rec);

/* Task context, in the window: copies the records now in run's rings that pass filter into the capture
 * (profiler_drain, consuming them) and nothing else -- no fold, no symbol, no output. A record that finds the
 * capture full is counted in cap->dropped. */
void profile_capture_drain(struct profile_capture *cap, struct profile_run *run, const struct profile_filter *filter);

/* After the stop: run, with the capture as its only ring, for the fold or the raw lines to drain as they drain
 * the CPUs' rings -- with no filter, since its records passed one already -- before they drain what the stop
 * left in run's own rings. */
struct profile_run *profile_capture_replay(struct profile_capture *cap, const struct profile_run *run);

#endif
