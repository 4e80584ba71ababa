/* kernel/profiler/capture.c: the window's capture (kernel/profiler/capture.h) -- the records of a `profile`
 * window copied out of the CPUs' rings into one preallocated ring while the window runs, and handed to the
 * fold or the raw lines after the stop, so that the only work the profiler does inside the window it is
 * profiling is a copy of 112 bytes a record. Task context only (it allocates; the drain is the rings' one
 * consumer, under the profiler's claim). */
#include "kernel/profiler/capture.h"

#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/heap.h"

#define CAPTURE_PAGE 4096

_Static_assert((PROFILE_CAPTURE_MAX_RECORDS & (PROFILE_CAPTURE_MAX_RECORDS - 1)) == 0,
               "the capture is a ring: its size is a power of two");
_Static_assert(PROFILE_CAPTURE_MAX_RECORDS >= 64u * 1000u * 2u, "64 cpus at 1 kHz for 2000 ms fit");

uint64_t profile_capture_want(unsigned ncpus, unsigned tick_hz, uint64_t counter_period_cycles,
                              uint64_t cycles_per_ms, uint32_t window_ms)
{
    /* Samples a second on one CPU: the tick never comes faster than its rate (late ticks coalesce); the
     * counter's period is nominal, in cycles a faster core runs through sooner. */
    uint64_t hz = tick_hz;
    if (counter_period_cycles) {
        uint64_t counter_hz = PROFILE_CAPTURE_COUNTER_HEADROOM *
                              ((cycles_per_ms * 1000 + counter_period_cycles - 1) / counter_period_cycles);
        if (counter_hz > hz)
            hz = counter_hz;
    }
    /* The window and one drain step more (the last sleep may overrun it), on every CPU. */
    uint64_t per_cpu = ((uint64_t)window_ms + PROFILE_DRAIN_MS) * hz / 1000 + 1;
    return per_cpu * (ncpus > MAX_CPUS ? MAX_CPUS : ncpus);
}

/* Room for want records: a power of two, at least a ring's worth and at most PROFILE_CAPTURE_MAX_RECORDS. */
static uint32_t room_for(uint64_t want)
{
    uint64_t size = PROFILE_RING_RECORDS;
    while (size < want && size < PROFILE_CAPTURE_MAX_RECORDS)
        size *= 2;
    return (uint32_t)size;
}

uint32_t profile_capture_size(unsigned ncpus, unsigned tick_hz, uint64_t counter_period_cycles,
                              uint64_t cycles_per_ms, uint32_t window_ms)
{
    return room_for(profile_capture_want(ncpus, tick_hz, counter_period_cycles, cycles_per_ms, window_ms));
}

uint32_t profile_capture_keep_one_in(uint64_t want, uint32_t room)
{
    if (!room || want <= room)
        return 1;
    uint64_t n = (want + room - 1) / room;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

uint32_t profile_capture_size_wall(unsigned tasks, uint32_t window_ms)
{
    return room_for(((uint64_t)window_ms + PROFILE_DRAIN_MS) / PROFILE_WALL_PERIOD_MS * tasks + tasks);
}

/* Storage for want records, or as many fewer (halving) as the heap has. */
static bool capture_allocate(struct profile_capture *cap, uint32_t want)
{
    for (uint32_t size = want; size >= PROFILE_RING_RECORDS; size /= 2) {
        size_t bytes = sizeof(struct profile_record) * size;
        struct profile_record *storage = kmalloc(bytes);
        if (storage) {
            /* One write a page: every page is touched now, not by the window's first copies into it, and
             * without the time zeroing megabytes would take. */
            for (size_t at = 0; at < bytes; at += CAPTURE_PAGE)
                ((volatile char *)storage)[at] = 0;
            profile_ring_init(&cap->ring, storage, size, 0);
            profiler_copies_hold(); /* its records' label pointers, until the fold holds the sets */
            return true;
        }
    }
    return false;
}

bool profile_capture_create(struct profile_capture *cap, uint32_t window_ms)
{
    __builtin_memset(cap, 0, sizeof *cap);
    cap->keep_one_in = 1;
    uint64_t period = pmu_probe() == PMU_COUNTS ? pmu_period_cycles() : 0;
    uint64_t want = profile_capture_want(cpu_count(), tick_hz(), period, cycles_per_ms(), window_ms);
    if (!capture_allocate(cap, room_for(want)))
        return false;
    uint32_t keep = profile_capture_keep_one_in(want, cap->ring.mask + 1);
    if (keep > 1) {
        /* Without its counters it keeps the window's start, as it did before it thinned: still a profile. */
        cap->seen = kmalloc(sizeof(uint32_t) * MAX_CPUS);
        if (cap->seen) {
            __builtin_memset(cap->seen, 0, sizeof(uint32_t) * MAX_CPUS);
            cap->keep_one_in = keep;
        }
    }
    return true;
}

bool profile_capture_create_wall(struct profile_capture *cap, uint32_t window_ms, unsigned tasks)
{
    __builtin_memset(cap, 0, sizeof *cap);
    cap->keep_one_in = 1;
    return capture_allocate(cap, profile_capture_size_wall(tasks, window_ms));
}

void profile_capture_destroy(struct profile_capture *cap)
{
    if (cap->ring.records)
        profiler_copies_release();
    kfree(cap->ring.records);
    cap->ring.records = 0;
    kfree(cap->seen);
    cap->seen = 0;
}

void profile_capture_take(void *arg, const struct profile_record *rec)
{
    struct profile_capture *cap = arg;
    uint32_t keep = cap->keep_one_in;
    if (keep > 1) {
        /* Counted per CPU, so each CPU keeps its share over the whole window whatever order the drains go in. */
        uint32_t *seen = &cap->seen[rec->cpu < MAX_CPUS ? rec->cpu : 0];
        if ((*seen)++ % keep) {
            cap->thinned++;
            return;
        }
    }
    struct profile_record *slot = profile_ring_reserve(&cap->ring);
    if (!slot) {
        /* Its own count, never the CPU's ring's: the header's drops are the per-CPU buffers' (the spec), and
         * the report says these in a line of their own. */
        cap->dropped++;
        return;
    }
    *slot = *rec;
    if (keep > 1) {
        /* It stands for the keep it was kept from: weights, and so every export's totals, stay the window's. */
        uint64_t period = (uint64_t)(rec->period ? rec->period : 1) * keep;
        slot->period = period > UINT32_MAX ? UINT32_MAX : (uint32_t)period;
    }
    profile_ring_commit(&cap->ring);
}

void profile_capture_drain(struct profile_capture *cap, struct profile_run *run, const struct profile_filter *filter)
{
    profiler_drain(run, filter, profile_capture_take, cap);
}

struct profile_run *profile_capture_replay(struct profile_capture *cap, const struct profile_run *run)
{
    cap->replay = *run;
    cap->replay.rings = &cap->ring;
    cap->replay.ncpus = 1;
    return &cap->replay;
}
