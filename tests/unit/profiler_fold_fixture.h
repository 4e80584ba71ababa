/* tests/unit/profiler_fold_fixture.h: what the fold and report tests share -- a heap that counts live
 * allocations and can be made to fail, a synthetic symbol table (text [0x1000, 0x10000) with a gap at
 * 0x1900..0x2000), synthetic runs over NCPUS per-CPU rings with records pushed by hand, and the report wrappers
 * that check every report's invariants (the counts add up, the per-CPU line, the chain table given back) before
 * the test compares the text. Defined once in profiler_fold_fixture.c for every test_profiler_fold_*.c. */
#ifndef TESTS_UNIT_PROFILER_FOLD_FIXTURE_H
#define TESTS_UNIT_PROFILER_FOLD_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/labels.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/symbols.h"

/* The counting heap (tests/unit/counting_heap.c, which every program of this fixture links). */
#include "counting_heap.h"

/* The first two lines of the report of new_run's synthetic tick run (the one setup makes): samples counted on
 * cpus CPUs, dropped dropped. A string literal, to begin an expected report. */
#define TICK_RUN_HEADER(samples, cpus, dropped)                                                              \
    "profiled 1000 ms\n" #samples " samples on " #cpus " cpus, " #dropped                                    \
    " dropped, source tick at 100 Hz (a synthetic run)\n"

/* The symbol table and the start addresses of its symbols. */
extern const struct symtab tab;
#define MEMCPY 0x1000u
#define COPY 0x1100u
#define RECEIVE 0x1200u
#define SPIN 0x1600u
#define MAIN 0x1700u
#define FILLER 0x2000u

#define NCPUS 4
#define CAP PROFILE_RING_RECORDS
extern struct profile_ring rings[NCPUS];
extern struct profile_run run;
extern char text[1 << 18]; /* a raw report of a full ring and more */
extern const struct label_set *next_labels; /* the label set push_record gives its records */

/* A fresh run of this number and source over empty rings, each ring starting at a different index. */
void new_run(uint32_t number, const char *source);
void push_record(unsigned cpu, uint32_t pid, uint32_t number, const uintptr_t *frames, unsigned n);

#define FRAMES(...) (const uintptr_t[]){ __VA_ARGS__ }, sizeof((const uintptr_t[]){ __VA_ARGS__ }) / sizeof(uintptr_t)
/* A sample of the current run: PUSH(cpu, pid, leaf, callers...). */
#define PUSH(cpu, pid, ...) push_record((cpu), (pid), run.run, FRAMES(__VA_ARGS__))
#define PUSH_N(times, cpu, pid, ...)                   \
    do {                                               \
        for (int push_i_ = 0; push_i_ < (times); push_i_++) \
            PUSH(cpu, pid, __VA_ARGS__);               \
    } while (0)


/* The report of the current run into text, checked and with the per-CPU line cut out (see
 * profiler_fold_fixture.c); report() is report_filtered() without a filter. */
const char *report_filtered(const struct profile_filter *filter, unsigned chains);
const char *report(unsigned chains);

/* The label set of one or two "key=value" pairs, interned. */
const struct label_set *set_of(const char *a, const char *b);

/* cmocka setup: the counting heap reset, no labels, a fresh run 7 on the tick. */
int setup(void **state);

#endif
