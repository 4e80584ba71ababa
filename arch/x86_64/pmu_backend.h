/* arch/x86_64/pmu_backend.h: what arch/x86_64/pmu.c (the one driver behind hal/pmu.h) shares with the vendor
 * backends in pmu_intel.c and pmu_amd.c. A backend is a table of data -- which MSRs, which bits, how wide the
 * counter is -- and a few hooks for what really differs between vendors: reading CPUID, describing it, and
 * preparing a CPU. Each vendor keeps a static const template; its init function copies the template into the
 * live table and patches it from CPUID. Once claimed, both vendors' counters are driven by the same code: a
 * counter, its control register, and optionally global enable/status/clear registers. Each vendor also says
 * which CPUs it serves and what pmu=claim-<vendor> makes CPUID answer (struct pmu_vendor). */
#ifndef ARCH_X86_64_PMU_BACKEND_H
#define ARCH_X86_64_PMU_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sink;

/* What CPUID claims, as the backend read it (through pmu_cpuid, so after any pmu=claim-* override). Kept
 * for `lscpu`; nothing decides anything from it after init. */
struct pmu_claims {
    /* Intel: CPUID leaf 0xA. */
    unsigned version;            /* architectural perfmon version; 0: none */
    unsigned general, general_width;
    unsigned fixed, fixed_width; /* contiguous fixed counters from 0 (EDX[4:0]) and their width */
    uint32_t fixed_bitmap;       /* v5+: ECX, fixed counter i supported if bit i is set */
    bool fixed1;                 /* fixed counter 1, unhalted core cycles, is there */
    bool hybrid;                 /* CPUID 7 EDX bit 15 */
    uint8_t core_type;           /* hybrid: CPUID 0x1A EAX[31:24] of the CPU that looked (0x20 Atom, 0x40 Core) */
    /* AMD: CPUID 0x80000001 and 0x80000022. */
    uint32_t max_ext_leaf;
    bool perfctr_core;           /* PerfCtrExtCore: six core counters at 0xC0010200 */
    bool v2_leaf_valid;          /* the maximum extended leaf reaches 0x80000022 */
    bool perfmon_v2;
    unsigned core_counters;      /* PerfMonV2: 0x80000022 EBX[3:0] */
};

struct pmu_backend {
    const char *vendor; /* "intel", "amd": for the log line and lscpu */
    const char *source; /* the report's name for this counter */

    /* The counter and its control register. Only the bits in control_mask belong to this counter: enabling
     * writes (old & ~control_mask) | control_count, plus control_interrupt when its overflow should raise the
     * PMI; disabling writes old & ~control_mask. */
    uint32_t counter_msr;
    uint32_t control_msr;
    uint64_t control_mask;
    uint64_t control_count;
    uint64_t control_interrupt;

    /* Global enable, overflow status and status clear, where the part has them (0 where not); global_bit is
     * this counter's bit in all three. Without a status register the overflow is recognised by the counter's
     * sign bit going clear: it is armed below zero, at -(period). */
    uint32_t global_ctrl_msr;
    uint32_t global_status_msr;
    uint32_t global_ack_msr;
    uint64_t global_bit;

    unsigned width;     /* counter bits: values written are masked to them */

    /* Where the part can freeze the counters on a PMI (Intel: IA32_DEBUGCTL bit 12), for the debugger's
     * `monitor pmu`; 0 where it cannot. */
    uint32_t freeze_msr;
    uint64_t freeze_bit;

    /* This CPU, before its counter is enabled (probe and every arm): false if an MSR access faulted. NULL
     * when there is nothing to prepare. */
    bool (*prepare)(const struct pmu_backend *b);
    /* lscpu: what CPUID claims, in this vendor's terms, a few lines. */
    void (*describe)(const struct pmu_backend *b, struct sink *out);

    struct pmu_claims claims;
};

/* A vendor the driver can pick at boot, before any backend exists: which CPUs are its own, what CPUID would
 * answer if the CPU claimed its PMU, and the init that builds its backend. */
struct pmu_vendor {
    const char *name;                 /* "intel", "amd": the option pmu=claim-<name> */
    const char *const *cpuid_vendors; /* CPUID leaf 0 vendor strings whose counters are this vendor's; NULL ends */
    /* Copies the template into *live and patches it from CPUID (pmu_cpuid). True when CPUID claims a usable
     * counter; otherwise false with the reason in why[cap] ("no PMU: ..."). *live is filled either way, so
     * lscpu can describe what was claimed. */
    bool (*init)(struct pmu_backend *live, char *why, size_t cap);
    /* Under pmu=claim-<name>: rewrites r, the CPU's real answer to leaf/sub, into what a CPU that claims this
     * vendor's PMU would answer. Leaves it alone for every leaf that says nothing about the PMU. */
    void (*claim_cpuid)(uint32_t leaf, uint32_t sub, uint32_t r[4]);
};

extern const struct pmu_vendor pmu_intel_vendor; /* pmu_intel.c */
extern const struct pmu_vendor pmu_amd_vendor;   /* pmu_amd.c */

/* CPUID as the backends must see it: the real answer, except under pmu=claim-<vendor>, where that vendor's
 * claim_cpuid rewrites it (pmu.c). */
void pmu_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]);

/* Fault-tolerant MSR access that remembers the MSR of the last fault, for the verdict's reason (pmu.c). */
bool pmu_rdmsr(uint32_t msr, uint64_t *v);
bool pmu_wrmsr(uint32_t msr, uint64_t v);

/* Bits [hi:lo] of v. */
static inline uint32_t pmu_bits(uint32_t v, unsigned hi, unsigned lo)
{
    return (v >> lo) & (uint32_t)((2ull << (hi - lo)) - 1);
}

/* pmu.c's state as its report (pmu_report.c: monitor pmu, lscpu, the stopped counter's snapshot) reads it. */
struct pmu_view {
    bool have_backend;             /* a vendor init ran: *live says what CPUID claims */
    const struct pmu_backend *live;
    const char *vendor_id;
    const char *mode_name;         /* pmu= when not auto ("off", "claim-intel"); NULL under auto */
    bool mode_off;
    bool pmi_masks_lvt;            /* the probe saw the PMI's delivery mask the LVT entry */
};
/* Any context; meaningful once pmu_select has run. */
void pmu_report_view(struct pmu_view *v);
struct pmu_cpu_view {
    bool armed, probing, late_pending, arm_failed;
    uint64_t nmi_lvt_accesses;     /* LVT entry reads and writes by this CPU's NMI claim */
};
/* One CPU's flags and counts, as another CPU may look at them; false past MAX_CPUS. Any context. */
bool pmu_cpu_view(unsigned cpu, struct pmu_cpu_view *v);

#ifdef KPROF_HOST
/* Host tests run many machines in one process: forget the selection, the verdict and every CPU's state. */
void pmu_reset_for_tests(void);
#endif

#endif
