/* kernel/profiler.h: the sampling profiler's run control and sample path (kernel/profiler.c): one run at a
 * time, claimed, started and stopped from task context, sampled from every CPU's tick or counter NMI into that
 * CPU's ring (kernel/profiler_ring.h). The fold and the report are kernel/profiler_report.h; the `profile`
 * command's arguments kernel/profiler_args.h. The specification is shared/seeds/profiler-spec.txt. */
#ifndef KERNEL_PROFILER_H
#define KERNEL_PROFILER_H

#include <stdint.h>
#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "kernel/profiler_ring.h"

/* The tick samples each CPU at TICK_HZ (hal/cpu.h): the raw format's period for a tick run. */
#define PROFILE_TICK_PERIOD_NS (1000000000u / TICK_HZ)

/* Everything a report needs about one run. */
struct profile_run {
    struct profile_ring *rings; /* one per CPU, indexed by cpu_index() */
    unsigned ncpus;             /* rings with storage */
    uint32_t run;               /* the run number the records of this run carry (never 0) */
    const char *source;         /* how samples were taken: "tick", or a "pmu/..." counter */
    const char *source_name;    /* the same without the tick's reason: "tick" or the counter's name */
    uint64_t period_ns;         /* nominal time between two samples on one CPU */
    int64_t start_ns;
    uint32_t window_ms;         /* measured, from start to stop */
};

enum profiler_status {
    PROFILER_OK = 0,
    PROFILER_BUSY = -1,      /* another profile is running: "profile: busy" */
    PROFILER_NO_MEMORY = -2, /* the rings could not be allocated */
};

/* The sample path's entry points, profiler_tick and profiler_sample, are declared in hal/kernel_entry.h. */

/* Task context. Claims the profiler (PROFILER_BUSY when another run holds it), allocates the rings of the
 * CPUs that are online if they have none yet, empties them and starts a new run, described in *run. On
 * PROFILER_NO_MEMORY the claim is given back. */
int profiler_start(struct profile_run *run);
/* Ends the run: no CPU records into it after this returns, except a sample already past its check, which
 * the report recognises by its run number. Sets run->window_ms. */
void profiler_stop(struct profile_run *run);
/* Gives the claim back, after the report. */
void profiler_release(void);

#endif
