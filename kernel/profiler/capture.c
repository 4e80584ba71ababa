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

uint32_t profile_capture_size(unsigned ncpus, unsigned tick_hz, uint64_t counter_period_cycles,
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
    uint64_t want = per_cpu * (ncpus > MAX_CPUS ? MAX_CPUS : ncpus);
    uint64_t size = PROFILE_RING_RECORDS;
    while (size < want && size < PROFILE_CAPTURE_MAX_RECORDS)
        size *= 2;
    return (uint32_t)size;
}

uint32_t profile_capture_size_wall(unsigned tasks, uint32_t window_ms)
{
    uint64_t want = ((uint64_t)window_ms + PROFILE_DRAIN_MS) / PROFILE_WALL_PERIOD_MS * tasks + tasks;
    uint64_t size = PROFILE_RING_RECORDS;
    while (size < want && size < PROFILE_CAPTURE_MAX_RECORDS)
        size *= 2;
    return (uint32_t)size;
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
    uint64_t period = pmu_probe() == PMU_COUNTS ? pmu_period_cycles() : 0;
    return capture_allocate(cap, profile_capture_size(cpu_count(), tick_hz(), period, cycles_per_ms(), window_ms));
}

bool profile_capture_create_wall(struct profile_capture *cap, uint32_t window_ms, unsigned tasks)
{
    __builtin_memset(cap, 0, sizeof *cap);
    return capture_allocate(cap, profile_capture_size_wall(tasks, window_ms));
}

void profile_capture_destroy(struct profile_capture *cap)
{
    if (cap->ring.records)
        profiler_copies_release();
    kfree(cap->ring.records);
    cap->ring.records = 0;
}

void profile_capture_take(void *arg, const struct profile_record *rec)
{
    struct profile_capture_into *into = arg;
    struct profile_record *slot = profile_ring_reserve(&into->cap->ring);
    if (!slot) {
        /* profile_ring_reserve counted it in the capture's own ring; the report reads the CPUs' rings */
        into->cap->dropped++;
        if (rec->cpu < into->run->ncpus)
            atomic_fetch_add_explicit(&into->run->rings[rec->cpu].drops, 1, memory_order_relaxed);
        return;
    }
    *slot = *rec;
    profile_ring_commit(&into->cap->ring);
}

void profile_capture_drain(struct profile_capture *cap, struct profile_run *run, const struct profile_filter *filter)
{
    struct profile_capture_into into = { cap, run };
    profiler_drain(run, filter, profile_capture_take, &into);
}

struct profile_run *profile_capture_replay(struct profile_capture *cap, const struct profile_run *run)
{
    cap->replay = *run;
    cap->replay.rings = &cap->ring;
    cap->replay.ncpus = 1;
    return &cap->replay;
}
