/* kernel/profiler.h: the sampling profiler's run control and sample path (kernel/profiler.c): one run at a
 * time, claimed, started and stopped from task context, sampled from every CPU's tick or counter NMI into that
 * CPU's ring (kernel/profiler_ring.h). Taking the samples out -- the drain, the drops, the window -- is
 * kernel/profiler/run.h; the fold kernel/profiler/fold.h, the report kernel/profiler/report.h; the `profile`
 * command's arguments kernel/profiler/args.h. The specification is shared/seeds/profiler-spec.txt.
 *
 * What a tick costs (the spec's "one atomic read per tick per CPU, plus a sample"): outside a run, the one
 * atomic read of the active word. An armed CPU's tick during a run adds only plain per-CPU memory -- its
 * counters of overflows, NMI cycles and idle waits, which the NMI and the scheduler keep -- and reads no
 * clock and no register, except on the one tick that finds the counter stopped or over budget (that tick
 * disarms or reloads it). A tick that samples reads the clock once, for the record's time, and measures its
 * own lateness from that same reading against the schedule its ticks keep (never the LAPIC timer's count: an
 * MMIO read, a VM exit under a hypervisor). */
#ifndef KERNEL_PROFILER_H
#define KERNEL_PROFILER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "hal/pmu.h"
#include "kernel/profiler_ring.h"

/* The window (kernel/profiler/run.h) takes the records out of the rings this often while it runs, so a ring of
 * 1024 records holds up at the counter's rate (about 1 kHz per CPU) and far beyond. */
#define PROFILE_DRAIN_MS 50
/* The counter path may spend at most this share of a CPU's time in its NMI (Linux's
 * perf_cpu_time_max_percent); past it that CPU's period doubles, and the report says so. */
#define PROFILE_NMI_BUDGET_PERCENT 25

/* Where one CPU's samples came from in a run: the per-CPU line of the report. */
enum profiler_cpu_source {
    PROFILER_CPU_ABSENT,         /* no tick of the run reached this CPU */
    PROFILER_CPU_TICK,           /* the tick: the run had no usable counter */
    PROFILER_CPU_COUNTER,        /* its counter, armed for the whole run */
    PROFILER_CPU_TICK_ARM_FAULT, /* the tick: arming its counter faulted */
    PROFILER_CPU_TICK_STOPPED,   /* the counter until it stopped interrupting, then the tick */
};

/* One CPU's account of one run. Written only by that CPU, from its own tick and NMI; read by the report once
 * the run has stopped (profiler_stop waits until every CPU is done with it). */
struct profiler_cpu_run {
    uint32_t run;               /* the run this account is of: a CPU starts a fresh one on its first tick */
    uint8_t source;             /* enum profiler_cpu_source */
    bool throttled;             /* its NMI time passed PROFILE_NMI_BUDGET_PERCENT: the period was doubled */
    uint32_t ticks;             /* ticks of the run */
    uint32_t nmis;              /* counter overflows taken */
    uint32_t late_ticks;        /* ticks taken more than half a period late ... */
    uint32_t let_in_ticks;      /* ... of which just after an sti/popf: held off by interrupts-off code */
    uint64_t held_off_ns;       /* lateness of the let-in ticks: time spent with interrupts off */
    uint64_t late_elsewhere_ns; /* lateness of the other late ticks: the CPU was taken away (a host) */
    uintptr_t let_in_pc;        /* where the latest let-in tick landed */
    uint64_t period_cycles;     /* the counter's period at the end (throttling doubles it) */
    uint64_t counting_period;   /* the period the counter is counting now: what its next overflow stands for */
    int64_t stopped_ns;         /* when its counter was found stopped, relative to the run's start */
    struct pmu_snapshot stopped_msrs; /* what its counter's registers said then */
    /* the lateness of ticks: when the tick the previous sampling tick stood for was due (time_ns) */
    int64_t last_due_ns;
    /* the stopped-counter watch */
    uint32_t nmis_at_tick;
    uint64_t idle_waits_at_tick;
    uint32_t silent_ticks;
    uint32_t silent_ticks_limit; /* silent busy ticks that mean "stopped", for its current period */
    /* the NMI budget */
    uint64_t nmi_cycles;        /* spent in the counter's NMIs in the run (cycles(), added by the NMI) */
    uint32_t budget_nmis;       /* nmis and nmi_cycles at the last budget check (by the tick) */
    uint64_t budget_cycles;
};

/* A wall profile's period: every task is sampled this often, whatever it is doing (the second seed's 10 ms). */
#define PROFILE_WALL_PERIOD_MS 10

/* Everything a report needs about one run. */
struct profile_run {
    bool wall;                  /* set by the caller before profiler_start (a session: from its consumer): a
                                 * wall run -- every task, every PROFILE_WALL_PERIOD_MS, on the tick -- rather
                                 * than the CPUs' samples */
    uint64_t wall_period_ns;    /* a wall run: the time between two sweeps of a CPU's tasks; each sample weighs
                                 * the time since its CPU's last sweep (more when a tick came late) */
    struct profile_ring *rings; /* one per CPU, indexed by cpu_index() */
    unsigned ncpus;             /* rings with storage */
    uint32_t run;               /* the run number the records of this run carry (never 0) */
    const char *source;         /* how samples were taken: "tick", or a "pmu/..." counter */
    const char *source_name;    /* the same ("tick" or the counter's name), as the raw format's word */
    const char *tick_reason;    /* why the tick and not the counter (NULL on a counter run) */
    uint64_t period_ns;         /* nominal time between two samples on one CPU */
    uint64_t period_cycles;     /* on the counter: the period it was armed with, in the cycles it counts */
    unsigned tick_hz;           /* the tick's rate */
    int64_t start_ns;
    uint32_t window_ms;         /* measured, from start to stop */
    const struct profiler_cpu_run *cpu; /* per CPU, valid once stopped */
    const uint64_t *busy_ns;    /* per CPU, once stopped: the window less the time its idle task ran (NULL:
                                 * not measured); the counter's rate is its samples per second of it */
};

enum profiler_status {
    PROFILER_OK = 0,
    PROFILER_BUSY = -1,      /* another profile is running: "profile: busy" */
    PROFILER_NO_MEMORY = -2, /* the rings could not be allocated */
};

/* The sample path's entry points, profiler_tick and profiler_nmi, are declared in hal/kernel_entry.h. */

/* Boot, before any CPU starts its tick: profile.hz= from the kernel command line (NULL when absent), the
 * tick's rate and so the tick source's sampling rate -- TICK_HZ_DEFAULT, or TICK_HZ_MIN..TICK_HZ_MAX. A bad
 * value is reported in one line and the default kept. */
void profiler_set_tick_rate(const char *hz_option);
/* Boot, before the first run: profile.ring_records= (NULL when absent), a test knob -- the records each CPU's ring
 * holds, a power of two PROFILE_RING_RECORDS_MIN..PROFILE_RING_RECORDS (the default). A bad value is reported in
 * one line and the size kept (false). Both are kernel/profiler/options.c. */
#define PROFILE_RING_RECORDS_MIN 64
bool profiler_set_ring_records(const char *records_option);
/* The records each CPU's ring holds (profile.ring_records=, else PROFILE_RING_RECORDS). */
uint32_t profiler_ring_records(void);

/* Task context. Claims the profiler (PROFILER_BUSY when another run holds it), allocates the rings of the
 * CPUs that are online if they have none yet, empties them and starts a new run, described in *run. On
 * PROFILER_NO_MEMORY the claim is given back. */
int profiler_start(struct profile_run *run);
/* Ends the run: no CPU records into it after this returns, except a sample already past its check, which
 * the report recognises by its run number. It asks every CPU that began the run to let go of it
 * (cpu_send_profiler_stop) and waits (task context, at most a few ticks) until each has, on that request or
 * its own tick -- a CPU on the counter disarms it there and masks its LVT entry; overflows until then are
 * dropped. A CPU that cannot answer in time (descheduled, parked by the debugger) lets go when it takes the
 * request or at its counter's next NMI, recording nothing. Sets run->window_ms. */
void profiler_stop(struct profile_run *run);
/* Gives the claim back, after the report. */
void profiler_release(void);

/* Task context. Records copied out of the rings (the window's capture, kernel/profiler/capture.h) carry label
 * set pointers with no reference, like the rings' own, until a fold takes its references after the stop: while
 * any copy is held the label pool counts the rings as not drained and frees no retired set. One release for
 * each hold. */
void profiler_copies_hold(void);
void profiler_copies_release(void);

#endif
