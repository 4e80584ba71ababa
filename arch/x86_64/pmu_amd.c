/* arch/x86_64/pmu_amd.c: the AMD backend -- general counter 0 of the core performance-counter extension
 * (0xC0010200..), counting event 0x76, "CPU Clocks not Halted", the one event number that has not moved across
 * AMD families. The legacy counters at 0xC0010000.. are never touched: no CPUID bit says they exist, and a
 * guest whose host turned its virtual PMU off takes a #GP from the first write. Before Zen 4 there is no global
 * status register: the counter is armed below zero and its overflow recognised by the sign bit going clear.
 * PerfMonV2 (Zen 4 on) adds global control, status and status-clear registers that work like Intel's. */
#include "arch/x86_64/pmu_backend.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"

#define MSR_AMD_PERF_CTL0 0xC0010200 /* core extension: PERF_CTLn at 0xC0010200 + 2n, PERF_CTRn just after */
#define MSR_AMD_PERF_CTR0 0xC0010201
#define MSR_AMD_PERF_GLOBAL_STATUS 0xC0000300
#define MSR_AMD_PERF_GLOBAL_CTL 0xC0000301
#define MSR_AMD_PERF_GLOBAL_STATUS_CLR 0xC0000302

#define EVENT_CPU_CLOCKS_NOT_HALTED 0x76ull
#define CTL_USR (1ull << 16)
#define CTL_OS (1ull << 17)
#define CTL_INT (1ull << 20)
#define CTL_EN (1ull << 22)
#define GLOBAL_PMC0 (1ull << 0)

#define CPUID_EXT_MAX 0x80000000u
#define CPUID_EXT_FEATURES 0x80000001u
#define CPUID_EXT_PERFMON 0x80000022u
#define PERFCTR_CORE_BIT 23

static void amd_describe(const struct pmu_backend *b, struct sink *out)
{
    const struct pmu_claims *c = &b->claims;
    sink_printf(out, "perfmon:    PerfCtrExtCore %s\n",
                c->perfctr_core ? "yes (6 core counters at 0xc0010200)" : "no");
    if (c->v2_leaf_valid)
        sink_printf(out, "perfmon:    PerfMonV2 %s", c->perfmon_v2 ? "yes" : "no");
    else
        /* QEMU answers leaves above the maximum with stale data that looks like PerfMonV2 (-cpu max says
         * 0x21f at 0x80000022): say why it was not asked. */
        sink_printf(out, "perfmon:    PerfMonV2 not reported (maximum extended leaf 0x%x < 0x80000022)",
                    c->max_ext_leaf);
    if (c->perfmon_v2)
        sink_printf(out, ", %u core counters\n", c->core_counters);
    else
        sink_puts(out, "\n");
}

static const struct pmu_backend amd_template = {
    .vendor = "amd",
    .source = "pmu/nmi amd pmc0 ev0x76",
    .counter_msr = MSR_AMD_PERF_CTR0,
    .control_msr = MSR_AMD_PERF_CTL0,
    .control_mask = ~0ull, /* the whole of PERF_CTL0 is counter 0's */
    .control_count = EVENT_CPU_CLOCKS_NOT_HALTED | CTL_USR | CTL_OS | CTL_EN,
    .control_interrupt = CTL_INT,
    .width = 48,
    .describe = amd_describe,
};

static bool amd_init(struct pmu_backend *live, char *why, size_t cap)
{
    *live = amd_template;
    struct pmu_claims *c = &live->claims;
    uint32_t r[4];

    pmu_cpuid(CPUID_EXT_MAX, 0, r);
    c->max_ext_leaf = r[0];
    if (c->max_ext_leaf >= CPUID_EXT_FEATURES) {
        pmu_cpuid(CPUID_EXT_FEATURES, 0, r);
        c->perfctr_core = (r[2] >> PERFCTR_CORE_BIT) & 1;
    }
    /* Asked only when the range reaches it: above the maximum the answer is not this leaf's. */
    c->v2_leaf_valid = c->max_ext_leaf >= CPUID_EXT_PERFMON;
    if (c->v2_leaf_valid) {
        pmu_cpuid(CPUID_EXT_PERFMON, 0, r);
        c->perfmon_v2 = r[0] & 1;
        c->core_counters = pmu_bits(r[1], 3, 0);
    }

    if (!c->perfctr_core) {
        ksnprintf(why, cap, "no usable PMU: CPUID 0x80000001 ECX bit 23 (PerfCtrExtCore) is clear, and the "
                            "legacy counters are never used");
        return false;
    }
    if (c->perfmon_v2) {
        live->global_ctrl_msr = MSR_AMD_PERF_GLOBAL_CTL;
        live->global_status_msr = MSR_AMD_PERF_GLOBAL_STATUS;
        live->global_ack_msr = MSR_AMD_PERF_GLOBAL_STATUS_CLR;
        live->global_bit = GLOBAL_PMC0;
        live->source = "pmu/nmi amd pmc0 ev0x76 perfmon-v2";
    }
    return true;
}

/* pmu=claim-amd: PerfCtrExtCore, and an extended leaf range that reaches its leaf; PerfMonV2 stays whatever the
 * CPU says. */
static void amd_claim_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    (void)sub;
    if (leaf == CPUID_EXT_MAX && r[0] < CPUID_EXT_FEATURES)
        r[0] = CPUID_EXT_FEATURES;
    if (leaf == CPUID_EXT_FEATURES)
        r[2] |= 1u << PERFCTR_CORE_BIT;
}

/* Hygon's parts are Zen cores with AMD's counters. */
static const char *const amd_cpuid_vendors[] = { "AuthenticAMD", "HygonGenuine", 0 };

const struct pmu_vendor pmu_amd_vendor = {
    .name = "amd",
    .cpuid_vendors = amd_cpuid_vendors,
    .init = amd_init,
    .claim_cpuid = amd_claim_cpuid,
};
