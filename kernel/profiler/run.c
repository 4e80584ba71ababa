/* kernel/profiler/run.c: run control's consumer side (kernel/profiler/run.h): the one walk of a run's rings
 * that the fold, the raw lines and the stream's packer take their records from, the one sum of the rings'
 * drops, and the one window -- sleep in PROFILE_DRAIN_MS steps, drain after each -- that `profile` and the
 * stream's task both run. Task context only: it sleeps, and it is the rings' single consumer, so two of these
 * must never drain one run at once (the profiler's claim sees to that). Apart from the clock and the sleep it
 * is pure, so the host tests drive it over synthetic rings. */
#include "kernel/profiler/run.h"

#include "hal/cpu.h"
#include "kernel/labels.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

const struct label_set *profile_record_labels(const struct profile_record *rec)
{
    const struct label_set *set = rec->labels;
    return set && set->generation == rec->labels_generation ? set : 0;
}

bool profile_record_has_label(const struct profile_record *rec, const struct label_pair *pair)
{
    if (strcmp(pair->key, LABEL_SPAN_KEY) != 0)
        return label_set_has(profile_record_labels(rec), pair->key, pair->value);
    uint64_t span;
    return rec->span && parse_u64(pair->value, &span) && span == rec->span;
}

bool profile_record_wanted(const struct profile_record *rec, uint32_t run, const struct profile_filter *filter)
{
    if (rec->run != run)
        return false; /* a straggler of an earlier run, committed after this one reset the ring */
    if (filter && filter->by_pid && rec->pid != filter->pid)
        return false;
    if (filter && filter->by_label && !profile_record_has_label(rec, &filter->label))
        return false;
    return true;
}

void profiler_drain(struct profile_run *run, const struct profile_filter *filter, profiler_take_fn take, void *arg)
{
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++) {
        struct profile_ring *ring = &run->rings[cpu];
        /* Only what is in the ring now: what commits meanwhile waits for the next drain. */
        for (uint32_t n = profile_ring_count(ring); n > 0; n--) {
            const struct profile_record *rec = profile_ring_peek(ring);
            if (profile_record_wanted(rec, run->run, filter))
                take(arg, rec);
            profile_ring_advance(ring);
        }
    }
    /* Label sets retired meanwhile may wait only for records this drain took: give them back now. */
    label_reclaim();
}

uint64_t profiler_drops(const struct profile_run *run)
{
    uint64_t dropped = 0;
    for (unsigned cpu = 0; cpu < run->ncpus; cpu++)
        dropped += profile_ring_drops(&run->rings[cpu]);
    return dropped;
}

void profiler_window(const struct profile_run *run, uint32_t window_ms, profiler_window_stop_fn should_stop,
                     profiler_window_step_fn step, void *arg)
{
    int64_t end = run->start_ns + (int64_t)window_ms * 1000000;
    for (;;) {
        int64_t now = time_ns();
        /* signed: one clock, compared as a difference */
        bool over = window_ms && now - end >= 0;
        if (should_stop ? should_stop(arg, over) : over)
            return;
        int64_t next = now + (int64_t)PROFILE_DRAIN_MS * 1000000;
        task_sleep_until(window_ms && next - end > 0 ? end : next);
        step(arg);
    }
}
