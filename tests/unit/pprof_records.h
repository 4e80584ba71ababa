/* tests/unit/pprof_records.h: one profiler record with every field a pprof fold's key is made of, pushed into
 * the fold fixture's rings (tests/unit/profiler_fold_fixture.h), and a wall sample -- what test_pprof_fold.c and
 * test_pprof_encode.c build their runs from. */
#ifndef TESTS_UNIT_PPROF_RECORDS_H
#define TESTS_UNIT_PPROF_RECORDS_H

#include <string.h>

#include "kernel/profiler_ring.h"
#include "profiler_fold_fixture.h"

/* A record of run `number` into cpu's ring: the test fails if the ring is full. n frames, at most
 * PROFILE_MAX_FRAMES copied (nframes says n). */
static inline void push_full(unsigned cpu, uint32_t pid, uint32_t number, const struct label_set *labels,
                             uint64_t span, uint8_t flags, uint32_t held_off_us, uint32_t period,
                             const uintptr_t *frames, unsigned n)
{
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    assert_non_null(rec);
    memset(rec, 0, sizeof *rec);
    rec->cpu = (uint16_t)cpu;
    rec->pid = pid;
    rec->run = number;
    rec->labels = labels;
    rec->labels_generation = labels ? labels->generation : 0;
    rec->span = span;
    rec->flags = flags;
    rec->held_off_us = held_off_us;
    rec->period = period;
    rec->nframes = (uint8_t)n;
    memcpy(rec->frames, frames, (n > PROFILE_MAX_FRAMES ? PROFILE_MAX_FRAMES : n) * sizeof *frames);
    profile_ring_commit(&rings[cpu]);
}

/* A wall sample (PROFILE_REC_WALL) of pid on cpu in the fixture's run: its task's state and wait, the time it
 * stands for, its chain. */
static inline void push_wall(unsigned cpu, uint32_t pid, const struct label_set *labels, uint64_t span,
                             uint8_t activity, uint8_t waiting_on, uint32_t period, const uintptr_t *frames,
                             unsigned n)
{
    push_full(cpu, pid, run.run, labels, span, PROFILE_REC_WALL, 0, period, frames, n);
    struct profile_record *rec = &rings[cpu].records[(atomic_load(&rings[cpu].head) - 1) & rings[cpu].mask];
    rec->wall.activity = activity;
    rec->wall.waiting_on = waiting_on;
}

#endif
