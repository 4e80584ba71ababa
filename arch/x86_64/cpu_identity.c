/* arch/x86_64/cpu_identity.c: the CPU's identity for lscpu (arch/x86_64/cpu_identity.h) -- the vendor string of
 * leaf 0, the brand string of leaves 0x80000002..4, family/model/stepping from leaf 1 and the hypervisor
 * signature of leaf 0x40000000. Nothing is decided from it here: the PMU picks its backend from the vendor
 * string (pmu.c), everything else is only shown. */
#include "arch/x86_64/cpu_identity.h"

#include <stdint.h>

#include "arch/x86_64/pmu_hw.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

#define CPUID_VENDOR 0x0u
#define CPUID_FEATURES 0x1u
#define FEATURES_ECX_HYPERVISOR (1u << 31)
#define CPUID_HYPERVISOR 0x40000000u
#define CPUID_EXT_MAX 0x80000000u
#define CPUID_BRAND_FIRST 0x80000002u
#define CPUID_BRAND_LAST 0x80000004u

static unsigned bits(uint32_t v, unsigned hi, unsigned lo) { return (v >> lo) & (uint32_t)((2ull << (hi - lo)) - 1); }

/* Printable characters of a 12-byte CPUID signature ("TCGTCGTCGTCG", "KVMKVMKVM\0\0\0"). */
static void signature(const uint32_t regs[3], char out[CPU_VENDOR_ID_SIZE])
{
    const char *bytes = (const char *)regs;
    unsigned n = 0;
    for (unsigned i = 0; i < 12; i++)
        if (bytes[i] >= 0x20 && bytes[i] < 0x7F)
            out[n++] = bytes[i];
    out[n] = 0;
}

void cpu_vendor_id(char out[CPU_VENDOR_ID_SIZE])
{
    uint32_t r[4];
    pmu_hw_cpuid(CPUID_VENDOR, 0, r);
    /* EBX, EDX, ECX: the order the twelve characters read in. */
    memcpy(out, &r[1], 4);
    memcpy(out + 4, &r[3], 4);
    memcpy(out + 8, &r[2], 4);
    out[12] = 0;
}

void cpu_identity_describe(struct sink *out)
{
    uint32_t r[4];
    char vendor[CPU_VENDOR_ID_SIZE];
    cpu_vendor_id(vendor);
    sink_printf(out, "vendor:     %s\n", vendor);

    pmu_hw_cpuid(CPUID_EXT_MAX, 0, r);
    if (r[0] >= CPUID_BRAND_LAST) {
        uint32_t brand[13];
        for (unsigned i = 0; i < 3; i++)
            pmu_hw_cpuid(CPUID_BRAND_FIRST + i, 0, &brand[4 * i]);
        brand[12] = 0;
        const char *name = (const char *)brand;
        while (*name == ' ')
            name++;
        sink_printf(out, "model name: %s\n", name);
    }

    /* The extended model counts for families 6 and 15, the extended family only for 15: both vendors agree. */
    pmu_hw_cpuid(CPUID_FEATURES, 0, r);
    unsigned family = bits(r[0], 11, 8), model = bits(r[0], 7, 4), stepping = bits(r[0], 3, 0);
    if (family == 0x6 || family == 0xF)
        model |= bits(r[0], 19, 16) << 4;
    if (family == 0xF)
        family += bits(r[0], 27, 20);
    sink_printf(out, "family:     0x%x model 0x%x stepping %u\n", family, model, stepping);

    if (r[2] & FEATURES_ECX_HYPERVISOR) {
        uint32_t h[4];
        char sig[CPU_VENDOR_ID_SIZE];
        pmu_hw_cpuid(CPUID_HYPERVISOR, 0, h);
        signature(&h[1], sig);
        sink_printf(out, "hypervisor: %s\n", sig[0] ? sig : "(no signature)");
    } else {
        sink_puts(out, "hypervisor: none\n");
    }
}
