/* arch/x86_64/pmu_intel.c: the Intel backend -- architectural performance monitoring version 2 or later, fixed
 * counter 1 (unhalted core cycles), its overflow reported exactly by IA32_PERF_GLOBAL_STATUS. Fixed counter 1
 * exists on every part with architectural perfmon v2+, hybrid ones included, where the two core types agree
 * about little else (the general counters differ; fixed counter 1 and its width do not). */
#include "arch/x86_64/pmu_backend.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"

#define MSR_IA32_DEBUGCTL 0x1D9
#define DEBUGCTL_FREEZE_PERFMON_ON_PMI (1ull << 12)
#define MSR_IA32_FIXED_CTR1 0x30A
#define MSR_IA32_FIXED_CTR_CTRL 0x38D
#define MSR_IA32_PERF_GLOBAL_STATUS 0x38E
#define MSR_IA32_PERF_GLOBAL_CTRL 0x38F
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x390

/* Fixed counter 1's four bits of IA32_FIXED_CTR_CTRL (bits 4..7): count in ring 0 and in ring 3 -- the kernel
 * has no ring 3 today, and a cycle is a cycle -- and raise a PMI on overflow. Bit 6 (AnyThread) stays clear:
 * this logical CPU's cycles only. */
#define FIXED1_FIELD (0xFull << 4)
#define FIXED1_OS (1ull << 4)
#define FIXED1_USR (1ull << 5)
#define FIXED1_PMI (1ull << 7)
/* Fixed counter 1's bit in the global control, status and overflow-clear registers. */
#define GLOBAL_FIXED1 (1ull << 33)

#define CPUID_MAX_BASIC 0x0u
#define CPUID_PERFMON 0xAu

#define CORE_TYPE_ATOM 0x20
#define CORE_TYPE_CORE 0x40

/* Set, the counters stop dead at the first PMI and every later overflow is lost -- and firmware and
 * hypervisors do set it. The register is per logical CPU, so every CPU clears it before enabling. */
static bool intel_prepare(const struct pmu_backend *b)
{
    (void)b;
    uint64_t debugctl;
    if (!pmu_rdmsr(MSR_IA32_DEBUGCTL, &debugctl))
        return false;
    if (!(debugctl & DEBUGCTL_FREEZE_PERFMON_ON_PMI))
        return true;
    return pmu_wrmsr(MSR_IA32_DEBUGCTL, debugctl & ~DEBUGCTL_FREEZE_PERFMON_ON_PMI);
}

static const char *core_type_name(uint8_t type)
{
    switch (type) {
    case CORE_TYPE_ATOM: return "Atom (efficiency)";
    case CORE_TYPE_CORE: return "Core (performance)";
    default: return "unknown";
    }
}

static void intel_describe(const struct pmu_backend *b, struct sink *out)
{
    const struct pmu_claims *c = &b->claims;
    if (c->version == 0) {
        sink_puts(out, "perfmon:    none (CPUID leaf 0xA: version 0)\n");
    } else if (c->version < 2) {
        sink_printf(out, "perfmon:    arch perfmon v%u, %u general counters of %u bits, no fixed counters\n",
                    c->version, c->general, c->general_width);
    } else {
        sink_printf(out, "perfmon:    arch perfmon v%u, %u general counters of %u bits, %u fixed of %u bits\n",
                    c->version, c->general, c->general_width, c->fixed, c->fixed_width);
        if (c->version >= 5)
            sink_printf(out, "perfmon:    fixed-counter bitmap 0x%x\n", c->fixed_bitmap);
        sink_printf(out, "perfmon:    fixed counter 1 (unhalted core cycles): %s\n", c->fixed1 ? "yes" : "no");
    }
    if (c->hybrid)
        sink_printf(out, "hybrid:     yes; this CPU is %s\n", core_type_name(c->core_type));
}

static const struct pmu_backend intel_template = {
    .vendor = "intel",
    .source = "pmu/nmi intel fixed-ctr1",
    .counter_msr = MSR_IA32_FIXED_CTR1,
    .control_msr = MSR_IA32_FIXED_CTR_CTRL,
    .control_mask = FIXED1_FIELD,
    .control_count = FIXED1_OS | FIXED1_USR,
    .control_interrupt = FIXED1_PMI,
    .global_ctrl_msr = MSR_IA32_PERF_GLOBAL_CTRL,
    .global_status_msr = MSR_IA32_PERF_GLOBAL_STATUS,
    .global_ack_msr = MSR_IA32_PERF_GLOBAL_OVF_CTRL,
    .global_bit = GLOBAL_FIXED1,
    .width = 0, /* CPUID leaf 0xA EDX[12:5] */
    .freeze_msr = MSR_IA32_DEBUGCTL,
    .freeze_bit = DEBUGCTL_FREEZE_PERFMON_ON_PMI,
    .prepare = intel_prepare,
    .describe = intel_describe,
};

static bool intel_init(struct pmu_backend *live, char *why, size_t cap)
{
    *live = intel_template;
    struct pmu_claims *c = &live->claims;
    uint32_t r[4];

    pmu_cpuid(CPUID_MAX_BASIC, 0, r);
    uint32_t max_leaf = r[0];
    if (max_leaf >= 7) {
        pmu_cpuid(7, 0, r);
        c->hybrid = (r[3] >> 15) & 1;
    }
    if (c->hybrid && max_leaf >= 0x1A) {
        pmu_cpuid(0x1A, 0, r);
        c->core_type = (uint8_t)(r[0] >> 24);
    }
    if (max_leaf < 0xA) {
        ksnprintf(why, cap, "no PMU: CPUID has no leaf 0xA (maximum basic leaf 0x%x)", max_leaf);
        return false;
    }

    pmu_cpuid(CPUID_PERFMON, 0, r);
    c->version = pmu_bits(r[0], 7, 0);
    c->general = pmu_bits(r[0], 15, 8);
    c->general_width = pmu_bits(r[0], 23, 16);
    if (c->version >= 2) {
        c->fixed = pmu_bits(r[3], 4, 0);
        c->fixed_width = pmu_bits(r[3], 12, 5);
    }
    /* From v5 a fixed counter i exists if ECX bit i is set or EDX[4:0] > i: a hypervisor can offer counters
     * 0 and 2 without 1. */
    if (c->version >= 5)
        c->fixed_bitmap = r[2];
    c->fixed1 = c->version >= 2 && (c->fixed > 1 || (c->fixed_bitmap & 2));

    if (c->version == 0) {
        ksnprintf(why, cap, "no PMU: CPUID leaf 0xA reports version 0");
        return false;
    }
    if (c->version < 2) {
        ksnprintf(why, cap, "no usable PMU: arch perfmon v1 has no fixed counters (v2 or later needed)");
        return false;
    }
    if (!c->fixed1) {
        ksnprintf(why, cap, "no usable PMU: CPUID leaf 0xA lists no fixed counter 1 (unhalted core cycles)");
        return false;
    }
    /* A millisecond of cycles must fit below the sign bit with room to spare; real parts say 40 or 48. */
    if (c->fixed_width < 32 || c->fixed_width > 64) {
        ksnprintf(why, cap, "no usable PMU: CPUID leaf 0xA gives the fixed counters %u bits", c->fixed_width);
        return false;
    }
    live->width = c->fixed_width;
    return true;
}

/* pmu=claim-intel: arch perfmon v2 with 4 general counters of 48 bits and 3 fixed counters of 48 bits, and a
 * basic leaf range that reaches leaf 0xA. */
static void intel_claim_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    (void)sub;
    if (leaf == CPUID_MAX_BASIC && r[0] < CPUID_PERFMON)
        r[0] = CPUID_PERFMON;
    if (leaf == CPUID_PERFMON) {
        r[0] = 2u | 4u << 8 | 48u << 16 | 7u << 24;
        r[1] = 0;
        r[2] = 0;
        r[3] = 3u | 48u << 5;
    }
}

static const char *const intel_cpuid_vendors[] = { "GenuineIntel", 0 };

const struct pmu_vendor pmu_intel_vendor = {
    .name = "intel",
    .cpuid_vendors = intel_cpuid_vendors,
    .init = intel_init,
    .claim_cpuid = intel_claim_cpuid,
};
