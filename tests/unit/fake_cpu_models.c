/* tests/unit/fake_cpu_models.c: the machines the fake CPU of tests/unit/fake_cpu.h can be -- each a CPUID table
 * (vendor, family, the PMU leaves, a hypervisor's signature) and the few facts CPUID does not say (does the
 * counter interrupt, does a hypervisor swallow writes, do the legacy AMD MSRs #GP). The MSR file
 * (tests/unit/fake_cpu.c) takes every counter's existence and width from the CPUID answers set here, so a
 * model cannot claim one thing and implement another. */
#include "fake_cpu.h"

#include <stdio.h>
#include <string.h>

void fake_cpuid_set(uint32_t leaf, uint32_t sub, unsigned cpu, uint32_t eax, uint32_t ebx, uint32_t ecx,
                    uint32_t edx)
{
    struct fake_cpuid_entry *e = 0;
    for (unsigned i = 0; i < fake.cpuid_count; i++)
        if (fake.cpuid[i].leaf == leaf && fake.cpuid[i].sub == sub && fake.cpuid[i].cpu == cpu)
            e = &fake.cpuid[i];
    if (!e) {
        if (fake.cpuid_count == FAKE_CPUID_MAX) {
            fprintf(stderr, "fake_cpu: CPUID table full\n");
            return;
        }
        e = &fake.cpuid[fake.cpuid_count++];
    }
    *e = (struct fake_cpuid_entry){ .leaf = leaf, .sub = sub, .cpu = cpu, .r = { eax, ebx, ecx, edx } };
}

static uint32_t word(const char *s) /* four characters, little-endian, as CPUID returns them */
{
    uint32_t w;
    memcpy(&w, s, 4);
    return w;
}

static void set_max_basic(uint32_t max, const char *vendor)
{
    fake_cpuid_set(0, 0, FAKE_ANY_CPU, max, word(vendor), word(vendor + 8), word(vendor + 4));
}

/* Leaf 1 EAX for a display family/model: families from 0xF on use the extended family field. */
static uint32_t signature_eax(unsigned family, unsigned model, unsigned stepping)
{
    unsigned base = family >= 0xF ? 0xF : family, ext = family >= 0xF ? family - 0xF : 0;
    return (ext << 20) | ((model >> 4) << 16) | (base << 8) | ((model & 0xF) << 4) | stepping;
}

static void set_leaf1(unsigned family, unsigned model, unsigned stepping, bool hypervisor)
{
    fake_cpuid_set(1, 0, FAKE_ANY_CPU, signature_eax(family, model, stepping), 0, hypervisor ? 1u << 31 : 0, 0);
}

void fake_set_hypervisor(const char *sig)
{
    for (unsigned i = 0; i < fake.cpuid_count; i++)
        if (fake.cpuid[i].leaf == 1)
            fake.cpuid[i].r[2] |= 1u << 31;
    fake_cpuid_set(0x40000000u, 0, FAKE_ANY_CPU, 0x40000001u, word(sig), word(sig + 4), word(sig + 8));
}

static void set_brand(const char *name)
{
    char b[48] = { 0 };
    strncpy(b, name, sizeof b - 1);
    for (unsigned i = 0; i < 3; i++)
        fake_cpuid_set(0x80000002u + i, 0, FAKE_ANY_CPU, word(b + 16 * i), word(b + 16 * i + 4),
                       word(b + 16 * i + 8), word(b + 16 * i + 12));
}

/* What every model starts from: a fresh fake answering vendor's CPUID -- its highest basic and extended leaves,
 * the signature (family, model, stepping) -- and, when hypervisor is given, a hypervisor's signature (and
 * leaf 1's bit that says there is one). */
static void machine(const char *vendor, uint32_t max_basic, uint32_t max_ext, unsigned family, unsigned model,
                    unsigned stepping, const char *hypervisor)
{
    fake_reset();
    set_max_basic(max_basic, vendor);
    set_leaf1(family, model, stepping, hypervisor != NULL);
    if (hypervisor)
        fake_set_hypervisor(hypervisor);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, max_ext, 0, 0, 0);
}

/* An Intel part (family 6, extended leaves up to 0x80000008) whose PMU leaf 0xA answers eax, ecx and edx. */
static void intel(uint32_t max_basic, unsigned model, unsigned stepping, const char *hypervisor, uint32_t eax,
                  uint32_t ecx, uint32_t edx)
{
    machine("GenuineIntel", max_basic, 0x80000008u, 6, model, stepping, hypervisor);
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, eax, 0, ecx, edx);
}

/* ---- the models ---------------------------------------------------------------------------------------- */

/* An Intel PMU that counts and interrupts. How many counters, how wide, which version: CPUID leaf 0xA's
 * answer, which the MSR file reads on every access (per CPU: hybrid parts differ). */
static void intel_pmu(void)
{
    fake.pmu = FAKE_PMU_INTEL;
    fake.counts = true;
    fake.interrupts = true;
    fake.lvt_automask = true; /* Intel sets the LVT mask bit when it delivers a PMI */
}

static void amd_pmu(bool v2)
{
    fake.pmu = FAKE_PMU_AMD;
    fake.width = 48; /* the core counters' width: no CPUID field says it */
    fake.amd_v2 = v2;
    fake.counts = true;
    fake.interrupts = true;
    fake.lvt_automask = true; /* not documented either way for AMD; the handler must unmask regardless */
}

void fake_model_intel_v2(void)
{
    /* v2, 2 general counters of 40 bits; 3 fixed counters of 40 bits */
    intel(0xD, 0x17, 10, NULL, 0x07280202u, 0, 3u | 40u << 5);
    set_brand("Intel(R) Core(TM)2 Duo CPU     E8400  @ 3.00GHz");
    intel_pmu();
}

void fake_model_intel_v1(void)
{
    /* Core Duo: v1, 2 general counters of 40 bits, no fixed counters and no global registers (EDX reserved) */
    intel(0xA, 0x0E, 8, NULL, 0x07280201u, 0, 0);
    set_brand("Genuine Intel(R) CPU           T2500  @ 2.00GHz");
    intel_pmu();
}

void fake_model_intel_narrow_fixed(unsigned width)
{
    fake_model_intel_v2();
    /* v2 as before, but CPUID.0AH:EDX[12:5] gives the fixed counters width bits */
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0x07280202u, 0, 0, 3u | (width & 0xFFu) << 5);
}

void fake_model_intel_v4_freeze(void)
{
    intel(0x16, 0x5E, 3, NULL, 0x07300404u, 0, 3u | 48u << 5);
    intel_pmu();
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        fake.cpu[i].debugctl = 1u << 12; /* FREEZE_PERFMON_ON_PMI, left set by firmware */
}

void fake_model_intel_v5_no_fixed1(void)
{
    /* v5, 8 general counters; EDX: 1 contiguous fixed counter (0) of 48 bits; ECX bitmap: counters 0 and 2 */
    intel(0x20, 0x8F, 8, "KVMKVMKVM\0\0\0", 0x07300805u, 0x5, 1u | 48u << 5);
    intel_pmu();
}

void fake_model_intel_hybrid(void)
{
    machine("GenuineIntel", 0x20, 0x80000008u, 6, 0x97, 2, NULL);
    fake_cpuid_set(7, 0, FAKE_ANY_CPU, 0, 0, 0, 1u << 15); /* Hybrid */
    /* CPU 0 is a Core (performance) core, the others Atoms: different general counters, same fixed ones. */
    fake_cpuid_set(0x1A, 0, 0, 0x40000001u, 0, 0, 0);
    fake_cpuid_set(0xA, 0, 0, 0x07300805u, 0, 0x7, 0x8603u);
    for (unsigned cpu = 1; cpu < FAKE_CPUS; cpu++) {
        fake_cpuid_set(0x1A, 0, cpu, 0x20000001u, 0, 0, 0);
        fake_cpuid_set(0xA, 0, cpu, 0x07300605u, 0, 0x7, 0x8603u);
    }
    intel_pmu();
}

void fake_model_amd_zen2(void)
{
    machine("AuthenticAMD", 0x10, 0x8000001Fu, 0x17, 0x31, 0, NULL);
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 1u << 23, 0); /* PerfCtrExtCore */
    amd_pmu(false);
}

void fake_model_amd_zen4(void)
{
    machine("AuthenticAMD", 0x10, 0x80000028u, 0x19, 0x11, 1, NULL);
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 1u << 23, 0);
    fake_cpuid_set(0x80000022u, 0, FAKE_ANY_CPU, 0x1, 0x6, 0, 0); /* PerfMonV2, 6 core counters */
    amd_pmu(true);
}

void fake_model_amd_legacy_only(void)
{
    machine("AuthenticAMD", 0x10, 0x8000001Fu, 0x17, 0x31, 0, "KVMKVMKVM\0\0\0");
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 0, 0); /* no PerfCtrExtCore */
    fake.pmu = FAKE_PMU_NONE;                                   /* the extension MSRs #GP too */
    fake.legacy_gp = true;
}

void fake_model_hypervisor_swallows(void)
{
    intel(0x16, 0x5E, 3, "KVMKVMKVM\0\0\0", 0x07300402u, 0, 3u | 48u << 5);
    fake.swallow = true;
}

void fake_model_qemu_amd_max(void)
{
    /* The highest basic leaf is 0xD, whose EAX (XCR0's supported bits) is 0x21f: what every leaf above the
     * maximum answers, 0x80000022 included -- where bit 0 would read as PerfMonV2. */
    machine("AuthenticAMD", 0xD, 0x8000000Au, 0xF, 0x6B, 1, "TCGTCGTCGTCG");
    fake_cpuid_set(0xD, 0, FAKE_ANY_CPU, 0x21F, 0x240, 0x988, 0);
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 0x1u, 0); /* LAHF, no PerfCtrExtCore */
    set_brand("QEMU TCG CPU version 2.5+");
    fake.swallow = true;
}

void fake_model_no_interrupt(void)
{
    fake_model_intel_v4_freeze();
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        fake.cpu[i].debugctl = 0;
    fake.interrupts = false;
}

void fake_model_no_pmu(void)
{
    intel(0xD, 0x5E, 3, "TCGTCGTCGTCG", 0, 0, 0);
    fake.swallow = true;
}

void fake_model_kvm_unmasked_pmi(void)
{
    fake_model_intel_v2();
    set_leaf1(6, 0x17, 10, true);
    fake_set_hypervisor("KVMKVMKVM\0\0\0");
    fake.lvt_automask = false; /* older KVM injected the PMI without setting the mask bit */
}
