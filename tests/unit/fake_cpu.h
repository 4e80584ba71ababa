/* tests/unit/fake_cpu.h: a stateful fake x86 CPU for host tests of the PMU backends. It implements
 * arch/x86_64/pmu_hw.h in place of arch/x86_64/pmu_hw.c: CPUID answers from a table (with the real answer's
 * quirks above the maximum leaf), an MSR file as strict as the manuals -- counters that count fake time,
 * overflow status latched until its clear register clears it, #GP on reserved bits, on MSRs the model does not
 * have and on writes to read-only status, a hypervisor that swallows everything -- and a LAPIC LVT performance-counter entry through which an overflow with the interrupt bit
 * becomes an NMI, delivered by calling pmu_nmi_is_mine() at the next instruction boundary (the end of a
 * pmu_hw call). Every MSR and LVT write, and every NMI, is logged in order with the CPU's armed flag at the
 * time. Each fake_model_*() configures one machine from scratch. log_info/log_warn
 * are kernel/log.c's, onto the fake kernel's console (fake_log_text, tests/unit/fake_kernel.h). */
#ifndef TESTS_UNIT_FAKE_CPU_H
#define TESTS_UNIT_FAKE_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "fake_hal.h"

#define FAKE_CPUS 4
#define FAKE_LOG_MAX 4096
#define FAKE_CPUID_MAX 48
#define FAKE_ANY_CPU 0xFFu

/* Log entry kinds. */
enum fake_event {
    FAKE_WRMSR,  /* msr, value; faulted if the write raised #GP */
    FAKE_LVT,    /* a write of value to the LVT performance-counter entry */
    FAKE_NMI,    /* an NMI taken, logged where it arrived; value = what pmu_nmi_is_mine() said (1 = mine) */
};

struct fake_event_rec {
    enum fake_event kind;
    unsigned cpu;
    uint32_t msr;
    uint64_t value;
    bool faulted;
    bool armed;   /* pmu_armed_this_cpu() on that CPU when it happened */
    bool irqs_on; /* irq_enabled() then, and not inside an NMI (whose gate clears IF); a FAKE_NMI: the code it
                   * interrupted */
};

enum fake_pmu_kind { FAKE_PMU_NONE, FAKE_PMU_INTEL, FAKE_PMU_AMD };

struct fake_cpuid_entry {
    uint32_t leaf, sub;
    bool any_sub;
    unsigned cpu; /* FAKE_ANY_CPU, or the one CPU this answer is for (hybrid parts) */
    uint32_t r[4];
};

struct fake_cpu_state {
    /* Intel */
    uint64_t debugctl;
    uint64_t fixed_ctr[4], fixed_ctrl, global_ctrl, global_status;
    uint64_t pmc[8], evtsel[8];
    bool frozen; /* v4 streamlined freeze: counters stop until status bit 59 is cleared */
    /* AMD core extension and PerfMonV2 */
    uint64_t amd_ctl[6], amd_ctr[6], amd_global_ctl, amd_global_status;
    /* AMD legacy counters, when they exist */
    uint64_t legacy[8];
    /* LAPIC */
    uint32_t lvtpc;
    unsigned lvt_in_nmi; /* LVT entry reads and writes made while this CPU handled an NMI */
    /* NMI: one can be latched while another is being handled */
    bool nmi_pending, in_nmi;
    bool pmi_waiting; /* a PMI held by fake.hold_pmis, not through the LVT entry yet */
    uint64_t boundary; /* instruction boundaries passed outside an NMI: what an NMI interrupted (fake_nmi_at) */
};

struct fake_machine {
    /* ---- the machine (set by a model, adjustable by a test) ---- */
    enum fake_pmu_kind pmu; /* Intel: which counters, how many and how wide come from the CPUID leaf 0xA answer */
    unsigned width;      /* AMD: the core counters' width (48) */
    bool amd_v2;         /* PerfMonV2's global registers exist (with as many counters as 0x80000022 EBX[3:0]) */
    bool swallow;        /* every MSR reads 0 and swallows writes, never #GP (QEMU TCG, a lax hypervisor) */
    bool legacy_gp;      /* AMD legacy counters 0xC0010000..7 raise #GP (host turned the guest's vPMU off) */
    bool counts;         /* enabled counters advance with fake time, one per cycle */
    bool interrupts;     /* an overflow with the interrupt bit raises a PMI */
    bool lvt_automask;   /* delivering a PMI sets the LVT mask bit (Intel) */
    uint32_t gp_msr;     /* one more MSR whose every access raises #GP (0: none) */
    uint64_t cycles_per_call; /* fake time each pmu_hw call takes */
    bool hold_nmis;      /* latch NMIs without delivering them until fake_release_nmis() */
    bool hold_pmis;      /* a PMI raised waits before the LVT entry (the local APIC has not delivered it yet, the
                          * overflow status already shows) until fake_release_pmis() */
    bool log_off;        /* do not log (benchmarks) */
    bool x2apic;         /* the APIC runs in x2APIC mode: the LVT entry is MSR 0x834 (names only; same behaviour) */
    /* The NMI handler the fake CPU runs for each NMI it delivers; NULL: pmu_nmi_is_mine() alone. Tests of the
     * profiler put the kernel's NMI path here (claim, then sample). Returns whether the NMI was claimed. */
    bool (*nmi_handler)(void);
    struct fake_cpuid_entry cpuid[FAKE_CPUID_MAX];
    unsigned cpuid_count;

    /* ---- state ---- */
    uint64_t tsc;
    struct fake_cpu_state cpu[FAKE_CPUS];

    /* ---- observations ---- */
    struct fake_event_rec log[FAKE_LOG_MAX];
    unsigned log_len, log_dropped;
    unsigned legacy_touches;   /* accesses of any kind to 0xC0010000..0xC0010007 */
    unsigned msr_accesses;     /* reads and writes, all MSRs ... */
    unsigned msr_writes;       /* ... of which writes */
    unsigned lvt_writes, lvt_reads;
    unsigned nmis_mine, nmis_genuine;
    bool last_nmi_mine;
    unsigned pmis_lost;        /* PMIs raised while the LVT entry was masked */
    unsigned pmis_not_nmi;     /* PMIs raised with the LVT entry not in NMI mode */
    unsigned lvt_bad_writes;   /* LVT writes with reserved bits, an unsupported mode, or an illegal vector */
    unsigned freezes;          /* PMIs that froze the counters (DEBUGCTL.FREEZE_PERFMON_ON_PMI set) */
};

extern struct fake_machine fake;

/* MSR numbers the tests talk about. */
#define FAKE_MSR_DEBUGCTL 0x1D9u
#define FAKE_MSR_FIXED_CTR0 0x309u
#define FAKE_MSR_FIXED_CTR1 0x30Au
#define FAKE_MSR_FIXED_CTR_CTRL 0x38Du
#define FAKE_MSR_GLOBAL_STATUS 0x38Eu
#define FAKE_MSR_GLOBAL_CTRL 0x38Fu
#define FAKE_MSR_GLOBAL_OVF_CTRL 0x390u    /* v4: IA32_PERF_GLOBAL_STATUS_RESET */
#define FAKE_MSR_GLOBAL_STATUS_SET 0x391u  /* v4 on */
#define FAKE_MSR_AMD_LEGACY_FIRST 0xC0010000u
#define FAKE_MSR_AMD_LEGACY_LAST 0xC0010007u
#define FAKE_MSR_AMD_CTL0 0xC0010200u
#define FAKE_MSR_AMD_CTR0 0xC0010201u
#define FAKE_MSR_AMD_GLOBAL_STATUS 0xC0000300u
#define FAKE_MSR_AMD_GLOBAL_CTL 0xC0000301u
#define FAKE_MSR_AMD_GLOBAL_STATUS_CLR 0xC0000302u
#define FAKE_MSR_AMD_GLOBAL_STATUS_SET 0xC0000303u

/* Forgets everything: no CPUID leaves, no PMU, every MSR #GP, 100 cycles per call, CPU 0. */
void fake_reset(void);
/* The machine the profiler's tests run on: fake_reset(), model() configuring it, the PMU layer forgotten and
 * selected afresh as at boot (no pmu= value), NMIs to nmi_handler; every one of the FAKE_CPUS online, CPU 0
 * current, the tick at TICK_HZ_DEFAULT, no idle waits counted. */
void fake_boot(void (*model)(void), bool (*nmi_handler)(void));
/* Adds (or replaces) an answer. cpu = FAKE_ANY_CPU for all CPUs. */
void fake_cpuid_set(uint32_t leaf, uint32_t sub, unsigned cpu, uint32_t eax, uint32_t ebx, uint32_t ecx,
                    uint32_t edx);
/* The hypervisor bit and a 12-byte signature at 0x40000000 ("TCGTCGTCGTCG", "KVMKVMKVM\0\0\0"). */
void fake_set_hypervisor(const char *signature12);

/* The models (tests/unit/fake_cpu_models.c). Each starts from fake_reset(). */
void fake_model_intel_v1(void);            /* Core Duo: arch perfmon v1, 2 general counters, no fixed ones */
void fake_model_intel_v2(void);            /* Core 2: arch perfmon v2, 2 general + 3 fixed counters of 40 bits */
void fake_model_intel_narrow_fixed(unsigned width); /* v2 whose CPUID gives the fixed counters width bits */
void fake_model_intel_v4_freeze(void);     /* Skylake: v4, 48 bits, firmware left FREEZE_PERFMON_ON_PMI set */
void fake_model_intel_v5_no_fixed1(void);  /* v5 with fixed counters 0 and 2 but not 1 */
void fake_model_intel_hybrid(void);        /* Alder Lake: v5, CPU 0 a Core, CPU 1 an Atom (fewer counters) */
void fake_model_amd_zen2(void);            /* core extension, no global status: the sign bit */
void fake_model_amd_zen4(void);            /* core extension and PerfMonV2 */
void fake_model_amd_legacy_only(void);     /* no PerfCtrExtCore; legacy and extension MSRs #GP */
void fake_model_hypervisor_swallows(void); /* CPUID claims Intel v2; every MSR write swallowed, reads 0 */
void fake_model_qemu_amd_max(void);        /* QEMU -cpu max: no PMU, max ext leaf 0x8000000a, 0x80000022 junk */
void fake_model_no_interrupt(void);        /* Intel v4 whose counter counts but never raises a PMI */
void fake_model_no_pmu(void);              /* QEMU -cpu Skylake-Client: leaf 0xA zero, MSRs swallowed */
void fake_model_kvm_unmasked_pmi(void);    /* a KVM guest, Intel v2, whose PMIs leave the LVT entry unmasked */

/* Fake time on the current CPU (fake_cpu_index): one step of cycles (at most one overflow per counter) ... */
void fake_advance(uint64_t cycles);
/* ... or many small steps, as a CPU running code would see it (every overflow its own NMI). */
void fake_run(uint64_t cycles);
/* A genuine NMI on the current CPU (the monitor's `nmi`, a watchdog): delivered unless held. Returns
 * whether pmu_nmi_is_mine() claimed it. */
bool fake_inject_nmi(void);
/* The instruction the NMI being handled on the current CPU interrupted, as a count of boundaries: two NMIs
 * back to back (the second latched while the first was handled) see the same, any later NMI a higher one. */
static inline uint64_t fake_nmi_at(void) { return fake.cpu[fake_cpu_index % FAKE_CPUS].boundary; }
/* Delivers the NMIs latched while fake.hold_nmis was set, on the current CPU. */
void fake_release_nmis(void);
/* Lets the PMI held by fake.hold_pmis through the LVT entry (masking it, where the model does), on the current
 * CPU, and delivers the NMI it raises. */
void fake_release_pmis(void);

/* The log: index of the first entry at or after from matching (kind, msr), or -1. msr 0 matches any. */
int fake_find(unsigned from, enum fake_event kind, uint32_t msr);
/* Index of the first MSR write to msr at or after from with (value & bits) != 0 (set) or == 0 (clear). */
int fake_find_bits(unsigned from, uint32_t msr, uint64_t bits, bool set);
/* Writes in the log to MSRs in [lo, hi]. */
unsigned fake_writes_in(uint32_t lo, uint32_t hi);
/* Prints the log to stderr (for a failing test). */
void fake_dump_log(void);

#endif
