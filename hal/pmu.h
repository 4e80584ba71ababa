/* hal/pmu.h: the performance-counter sample source as the portable kernel sees it -- choose a backend at boot,
 * prove once that its counter really counts and interrupts, arm and disarm it on each CPU from that CPU's tick,
 * and tell the counter's overflow NMI apart from a genuine NMI. arch/x86_64/pmu.c implements it (Intel fixed
 * counter 1 or AMD core counter 0, overflowing into an NMI about every millisecond); nothing on this side of the
 * interface knows the vendor. The behaviour is the profiler spec's "Two sample sources", "CPUID is not trusted
 * on its own" and "Arming, and stopping". */
#ifndef HAL_PMU_H
#define HAL_PMU_H

#include <stdbool.h>
#include <stdint.h>

struct sink;

/* What is known about the counter. Everything but PMU_COUNTS means `profile` samples on the tick. */
enum pmu_verdict {
    PMU_NOT_PROBED,      /* CPUID claims a usable PMU; the probe has not run yet */
    PMU_DISABLED,        /* pmu=off on the kernel command line */
    PMU_NOT_CLAIMED,     /* CPUID says there is no usable PMU (or no backend knows this vendor) */
    PMU_COUNTS,          /* the probe saw the counter move and its overflow arrive as an NMI */
    PMU_DOES_NOT_COUNT,  /* CPUID claims a PMU, but the counter did not move (writes swallowed) */
    PMU_NO_INTERRUPT,    /* the counter moves, but its overflow never raised an NMI */
    PMU_FAULTED,         /* an access to one of its MSRs raised #GP */
};

/* Boot, once, before any other call: picks the backend from CPUID and logs the choice in one line. mode is
 * the kernel command line's pmu= value -- "auto" (or NULL), "off", "claim-intel" or "claim-amd"; the claim-*
 * modes answer the backend's CPUID questions as if the CPU claimed that vendor's PMU, so a machine without
 * one exercises the "claims a PMU but does not count" path for real. Any other value is reported and treated
 * as auto. */
void pmu_select(const char *mode);

/* Task context. The first call runs the probe on the calling CPU with interrupts off (microseconds; 10 ms when
 * the counter counts but never interrupts) and publishes the answer; every later call, on any CPU, returns
 * that answer. Concurrent first calls wait for the one probe. */
enum pmu_verdict pmu_probe(void);
/* The published verdict (PMU_NOT_PROBED before the probe). Any context. */
enum pmu_verdict pmu_verdict(void);
/* pmu_verdict() == PMU_COUNTS, read with acquire: a CPU that sees true may arm its counter. Any context. */
bool pmu_usable(void);

/* From this CPU's tick, interrupts off. Arms this CPU's counter (overflow every ~1 ms into an NMI) if the
 * probe said it counts; the armed flag is set before the counter is enabled. Returns whether this CPU is
 * armed now: false when the PMU is not usable, or when arming faulted here (then this CPU stays on the tick
 * and is not tried again). */
bool pmu_arm_this_cpu(void);
/* On this CPU, interrupts off -- its tick, the profiler's stop request, or its NMI (MSR and LVT writes are fine
 * there): disables this CPU's counter, masks its LVT performance-counter entry, then clears the armed flag, so
 * an overflow already in flight is still recognised as the counter's. Nothing to do when not armed. */
void pmu_disarm_this_cpu(void);
/* Whether this CPU's counter is armed (between the two calls above). */
bool pmu_armed_this_cpu(void);

/* The counter's period: how many of the cycles it counts (unhalted core cycles) lie between two overflows
 * when a CPU is armed -- about a millisecond's worth at the TSC's rate, never below the floor that keeps the
 * NMI handler a small share of the CPU -- when pmu_usable(); 0 otherwise. The profiler states it in the report
 * and, converted to nanoseconds, in the raw format. Any context. */
uint64_t pmu_period_cycles(void);
/* From this CPU's tick, armed, when its NMI time is over budget: doubles this CPU's period from its next
 * overflow on (up to a limit) and returns the new period; the next arm starts from pmu_period_cycles(). */
uint64_t pmu_throttle_this_cpu(void);

/* What this CPU's counter registers hold, read only (no write), for a report that must say why a counter
 * stopped interrupting. Interrupt context is fine: no locks, no allocation, no printing. */
#define PMU_SNAPSHOT_REGS 6
struct pmu_snapshot {
    unsigned count;
    struct {
        const char *name;  /* "counter", "control", "global ctrl", "global status", "freeze", "lvt perfcnt" */
        uint64_t value;
        bool faulted;      /* the read raised #GP */
    } regs[PMU_SNAPSHOT_REGS];
    /* Decoded: what would stop the overflow NMIs. */
    bool counting, pmi_enabled, globally_enabled, frozen, lvt_masked, lvt_nmi;
};
void pmu_snapshot_this_cpu(struct pmu_snapshot *snap);

/* NMI context, first thing: true when this NMI is this CPU's counter overflowing -- armed, probing, or the
 * short window after a disarm when the overflow was already pending -- as the counter's own overflow status
 * shows it and, on a machine where the probe saw the PMI's delivery mask the LVT performance-counter entry,
 * with that entry masked (unmasked, the PMI is still on its way and this NMI is another source's). Then it has
 * been acknowledged, the counter reloaded and the entry unmasked; the caller takes its sample. False means not
 * the counter's, which the caller must not swallow. No locks, no allocation, no printing. */
bool pmu_nmi_is_mine(void);

/* The name the report gives the counter source -- "pmu/nmi intel fixed-ctr1", "pmu/nmi amd pmc0 ev0x76",
 * "pmu/nmi amd pmc0 ev0x76 perfmon-v2" -- when pmu_usable(); NULL otherwise (the tick is the source). */
const char *pmu_source_name(void);
/* One line saying why the verdict is what it is ("no PMU: CPUID leaf 0xA reports version 0", "the counter
 * does not count (CPUID claims a PMU; writes are swallowed)", ...). Task context. */
const char *pmu_verdict_reason(void);

/* For the debugger's `monitor pmu`, run on the CPU described, interrupts off: this CPU's armed flag and every
 * MSR of the chosen backend as this CPU reads it, decoded -- counter, control (counting and PMI bits), global
 * enable and overflow status, the freeze-on-PMI bit -- and its LVT performance-counter entry. A read that
 * faults says so. No locks, no allocation. */
void pmu_describe_cpu(struct sink *out);

/* For `lscpu`: vendor, family/model/stepping, hypervisor, what CPUID claims about performance monitoring,
 * what the probe found, which source `profile` would use, and which CPUs have their counter armed now (none
 * outside a run). Runs the probe if it has not run (task context), never a profile. */
void pmu_describe(struct sink *out);

#endif
