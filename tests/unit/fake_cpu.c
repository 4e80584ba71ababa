/* tests/unit/fake_cpu.c: the stateful fake CPU of tests/unit/fake_cpu.h -- arch/x86_64/pmu_hw.h and msr.h answered from
 * a model of CPUID, the PMU MSRs of Intel arch perfmon and of AMD's core extension (with PerfMonV2), the
 * legacy AMD counters, the LVT performance-counter entry and NMI delivery -- and log_info/log_warn captured
 * for the tests. Time advances only when the code under test touches the fake (each pmu_hw call takes
 * fake.cycles_per_call cycles) or a test says so; counters count only on the CPU whose time advances. */
#include "fake_cpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86_64/pmu_hw.h"
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/log.h"

struct fake_machine fake;

/* ---- setup -------------------------------------------------------------------------------------------- */

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
    fake.cycles_per_call = 100;
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        fake.cpu[i].lvtpc = LVT_MASK_BIT; /* the reset value: masked */
    fake_cpu_index = 0;
}

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

/* ---- the models ---------------------------------------------------------------------------------------- */

static void intel_pmu(unsigned version, unsigned gp, unsigned fixed, unsigned width)
{
    fake.pmu = FAKE_PMU_INTEL;
    fake.intel_version = version;
    fake.gp_counters = gp;
    fake.fixed_counters = fixed;
    fake.width = width;
    fake.counts = true;
    fake.interrupts = true;
    fake.lvt_automask = true; /* Intel sets the LVT mask bit when it delivers a PMI */
}

static void amd_pmu(bool v2)
{
    fake.pmu = FAKE_PMU_AMD;
    fake.width = 48;
    fake.amd_v2 = v2;
    fake.counts = true;
    fake.interrupts = true;
    fake.lvt_automask = true; /* not documented either way for AMD; the handler must unmask regardless */
}

void fake_model_intel_v2(void)
{
    fake_reset();
    set_max_basic(0xD, "GenuineIntel");
    set_leaf1(6, 0x17, 10, false);
    set_brand("Intel(R) Core(TM)2 Duo CPU     E8400  @ 3.00GHz");
    /* v2, 2 general counters of 40 bits; 3 fixed counters of 40 bits */
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0x07280202u, 0, 0, 3u | 40u << 5);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000008u, 0, 0, 0);
    intel_pmu(2, 2, 3, 40);
}

void fake_model_intel_v4_freeze(void)
{
    fake_reset();
    set_max_basic(0x16, "GenuineIntel");
    set_leaf1(6, 0x5E, 3, false);
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0x07300404u, 0, 0, 3u | 48u << 5);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000008u, 0, 0, 0);
    intel_pmu(4, 4, 3, 48);
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        fake.cpu[i].debugctl = 1u << 12; /* FREEZE_PERFMON_ON_PMI, left set by firmware */
}

void fake_model_intel_v5_no_fixed1(void)
{
    fake_reset();
    set_max_basic(0x20, "GenuineIntel");
    set_leaf1(6, 0x8F, 8, true);
    fake_set_hypervisor("KVMKVMKVM\0\0\0");
    /* v5, 8 general counters; EDX: 1 contiguous fixed counter (0) of 48 bits; ECX bitmap: counters 0 and 2 */
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0x07300805u, 0, 0x5, 1u | 48u << 5);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000008u, 0, 0, 0);
    intel_pmu(5, 8, 3, 48);
}

void fake_model_intel_hybrid(void)
{
    fake_reset();
    set_max_basic(0x20, "GenuineIntel");
    set_leaf1(6, 0x97, 2, false);
    fake_cpuid_set(7, 0, FAKE_ANY_CPU, 0, 0, 0, 1u << 15); /* Hybrid */
    /* CPU 0 is a Core (performance) core, the others Atoms: different general counters, same fixed ones. */
    fake_cpuid_set(0x1A, 0, 0, 0x40000001u, 0, 0, 0);
    fake_cpuid_set(0xA, 0, 0, 0x07300805u, 0, 0x7, 0x8603u);
    for (unsigned cpu = 1; cpu < FAKE_CPUS; cpu++) {
        fake_cpuid_set(0x1A, 0, cpu, 0x20000001u, 0, 0, 0);
        fake_cpuid_set(0xA, 0, cpu, 0x07300605u, 0, 0x7, 0x8603u);
    }
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000008u, 0, 0, 0);
    intel_pmu(5, 6, 3, 48);
}

void fake_model_amd_zen2(void)
{
    fake_reset();
    set_max_basic(0x10, "AuthenticAMD");
    set_leaf1(0x17, 0x31, 0, false);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x8000001Fu, 0, 0, 0);
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 1u << 23, 0); /* PerfCtrExtCore */
    amd_pmu(false);
}

void fake_model_amd_zen4(void)
{
    fake_reset();
    set_max_basic(0x10, "AuthenticAMD");
    set_leaf1(0x19, 0x11, 1, false);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000028u, 0, 0, 0);
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 1u << 23, 0);
    fake_cpuid_set(0x80000022u, 0, FAKE_ANY_CPU, 0x1, 0x6, 0, 0); /* PerfMonV2, 6 core counters */
    amd_pmu(true);
}

void fake_model_amd_legacy_only(void)
{
    fake_reset();
    set_max_basic(0x10, "AuthenticAMD");
    set_leaf1(0x17, 0x31, 0, true);
    fake_set_hypervisor("KVMKVMKVM\0\0\0");
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x8000001Fu, 0, 0, 0);
    fake_cpuid_set(0x80000001u, 0, FAKE_ANY_CPU, 0, 0, 0, 0); /* no PerfCtrExtCore */
    fake.pmu = FAKE_PMU_NONE;                                   /* the extension MSRs #GP too */
    fake.legacy_gp = true;
}

void fake_model_hypervisor_swallows(void)
{
    fake_reset();
    set_max_basic(0x16, "GenuineIntel");
    set_leaf1(6, 0x5E, 3, true);
    fake_set_hypervisor("KVMKVMKVM\0\0\0");
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0x07300402u, 0, 0, 3u | 48u << 5);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000008u, 0, 0, 0);
    fake.swallow = true;
}

void fake_model_qemu_amd_max(void)
{
    fake_reset();
    /* The highest basic leaf is 0xD, whose EAX (XCR0's supported bits) is 0x21f: what every leaf above the
     * maximum answers, 0x80000022 included -- where bit 0 would read as PerfMonV2. */
    set_max_basic(0xD, "AuthenticAMD");
    set_leaf1(0xF, 0x6B, 1, true);
    fake_set_hypervisor("TCGTCGTCGTCG");
    fake_cpuid_set(0xD, 0, FAKE_ANY_CPU, 0x21F, 0x240, 0x988, 0);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x8000000Au, 0, 0, 0);
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
    fake_reset();
    set_max_basic(0xD, "GenuineIntel");
    set_leaf1(6, 0x5E, 3, true);
    fake_set_hypervisor("TCGTCGTCGTCG");
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0, 0, 0, 0);
    fake_cpuid_set(0x80000000u, 0, FAKE_ANY_CPU, 0x80000008u, 0, 0, 0);
    fake.swallow = true;
}

/* ---- the log ------------------------------------------------------------------------------------------- */

static void record(enum fake_event kind, uint32_t msr, uint64_t value, bool faulted)
{
    if (fake.log_off)
        return;
    if (fake.log_len == FAKE_LOG_MAX) {
        fake.log_dropped++;
        return;
    }
    fake.log[fake.log_len++] = (struct fake_event_rec){
        .kind = kind, .cpu = fake_cpu_index, .msr = msr, .value = value, .faulted = faulted,
        .armed = pmu_armed_this_cpu(), .irqs_on = irq_enabled(),
    };
}

int fake_find(unsigned from, enum fake_event kind, uint32_t msr)
{
    for (unsigned i = from; i < fake.log_len; i++)
        if (fake.log[i].kind == kind && (msr == 0 || fake.log[i].msr == msr))
            return (int)i;
    return -1;
}

int fake_find_bits(unsigned from, uint32_t msr, uint64_t bits, bool set)
{
    for (unsigned i = from; i < fake.log_len; i++)
        if (fake.log[i].kind == FAKE_WRMSR && fake.log[i].msr == msr && ((fake.log[i].value & bits) != 0) == set)
            return (int)i;
    return -1;
}

unsigned fake_writes_in(uint32_t lo, uint32_t hi)
{
    unsigned n = 0;
    for (unsigned i = 0; i < fake.log_len; i++)
        n += fake.log[i].kind == FAKE_WRMSR && fake.log[i].msr >= lo && fake.log[i].msr <= hi;
    return n;
}

void fake_dump_log(void)
{
    static const char *const kinds[] = { "wrmsr", "lvt", "nmi" };
    for (unsigned i = 0; i < fake.log_len; i++) {
        const struct fake_event_rec *e = &fake.log[i];
        fprintf(stderr, "%4u cpu%u %-5s 0x%08x 0x%016llx%s%s\n", i, e->cpu, kinds[e->kind], e->msr,
                (unsigned long long)e->value, e->faulted ? " #GP" : "", e->armed ? " armed" : "");
    }
}

/* ---- time, counting, overflow, the PMI ------------------------------------------------------------------ */

static struct fake_cpu_state *here(void) { return &fake.cpu[fake_cpu_index % FAKE_CPUS]; }

static uint64_t width_mask(void) { return fake.width >= 64 ? ~0ull : (1ull << fake.width) - 1; }

/* The counter overflowed with its interrupt bit set: the PMI goes through the LVT entry. */
static void raise_pmi(struct fake_cpu_state *s)
{
    if (!fake.interrupts)
        return;
    if (fake.pmu == FAKE_PMU_INTEL && (s->debugctl & (1u << 12))) {
        /* FREEZE_PERFMON_ON_PMI: before v4 the global enables are cleared; from v4 the counters freeze
         * until status bit 59 (CTR_FRZ) is cleared. Either way they stop. */
        fake.freezes++;
        if (fake.intel_version >= 4) {
            s->frozen = true;
            s->global_status |= 1ull << 59;
        } else {
            s->global_ctrl = 0;
        }
    }
    if (s->lvtpc & LVT_MASK_BIT) {
        fake.pmis_lost++;
        return;
    }
    if ((s->lvtpc & LVT_DELIVERY_MASK) != LVT_DELIVERY_NMI) {
        fake.pmis_not_nmi++;
        return;
    }
    if (fake.lvt_automask)
        s->lvtpc |= LVT_MASK_BIT;
    s->nmi_pending = true;
}

/* Adds cycles to a counter of the given width; returns whether it wrapped past zero. */
static bool count(uint64_t *ctr, uint64_t cycles)
{
    uint64_t next = *ctr + cycles;
    bool wrapped = next > width_mask();
    *ctr = next & width_mask();
    return wrapped;
}

static void advance_here(uint64_t cycles)
{
    struct fake_cpu_state *s = here();
    fake.tsc += cycles;
    if (!fake.counts || fake.swallow)
        return;
    if (fake.pmu == FAKE_PMU_INTEL) {
        for (unsigned i = 0; i < fake.fixed_counters; i++) {
            uint64_t field = s->fixed_ctrl >> (4 * i);
            bool on = (field & 1) && (s->global_ctrl & (1ull << (32 + i))) && !s->frozen; /* OS: ring 0 */
            if (on && count(&s->fixed_ctr[i], cycles)) {
                s->global_status |= 1ull << (32 + i);
                if (field & 8)
                    raise_pmi(s);
            }
        }
    } else if (fake.pmu == FAKE_PMU_AMD) {
        for (unsigned i = 0; i < 6; i++) {
            uint64_t ctl = s->amd_ctl[i];
            uint64_t event = (ctl & 0xFF) | ((ctl >> 24) & 0xF00);
            bool on = (ctl & (1ull << 22)) && (ctl & (1ull << 17)) && event == 0x76 &&
                      (!fake.amd_v2 || (s->amd_global_ctl & (1ull << i)));
            if (on && count(&s->amd_ctr[i], cycles)) {
                if (fake.amd_v2)
                    s->amd_global_status |= 1ull << i;
                if (ctl & (1ull << 20))
                    raise_pmi(s);
            }
        }
    }
}

/* An instruction boundary: a latched NMI is taken unless one is being handled (NMIs do not nest). */
static void deliver(void)
{
    struct fake_cpu_state *s = here();
    while (s->nmi_pending && !s->in_nmi && !fake.hold_nmis) {
        s->nmi_pending = false;
        s->in_nmi = true;
        unsigned slot = fake.log_len;
        record(FAKE_NMI, 0, 0, false); /* logged where it arrives; what the handler said is filled in after */
        bool mine = fake.nmi_handler ? fake.nmi_handler() : pmu_nmi_is_mine();
        s->in_nmi = false;
        if (!fake.log_off && slot < fake.log_len)
            fake.log[slot].value = mine;
        fake.last_nmi_mine = mine;
        if (mine)
            fake.nmis_mine++;
        else
            fake.nmis_genuine++;
    }
}

void fake_advance(uint64_t cycles)
{
    advance_here(cycles);
    deliver();
}

void fake_run(uint64_t cycles)
{
    while (cycles) {
        uint64_t step = cycles < 1000 ? cycles : 1000;
        advance_here(step);
        deliver();
        cycles -= step;
    }
}

bool fake_inject_nmi(void)
{
    struct fake_cpu_state *s = here();
    unsigned before = fake.nmis_mine + fake.nmis_genuine;
    s->nmi_pending = true;
    deliver();
    return fake.nmis_mine + fake.nmis_genuine != before && fake.last_nmi_mine;
}

void fake_release_nmis(void)
{
    fake.hold_nmis = false;
    deliver();
}

/* ---- the MSR file ---------------------------------------------------------------------------------------- */

/* A register that stores what is written. */
static bool plain(uint64_t *reg, bool write, uint64_t *v)
{
    if (write)
        *reg = *v;
    else
        *v = *reg;
    return true;
}

static bool intel_msr(struct fake_cpu_state *s, uint32_t msr, bool write, uint64_t *v)
{
    uint64_t fixed_bits = ((1ull << fake.fixed_counters) - 1) << 32;
    uint64_t gp_bits = (1ull << fake.gp_counters) - 1;
    if (msr == FAKE_MSR_DEBUGCTL)
        return plain(&s->debugctl, write, v);
    if (msr >= FAKE_MSR_FIXED_CTR0 && msr < FAKE_MSR_FIXED_CTR0 + fake.fixed_counters) {
        if (write && (*v & ~width_mask()))
            return false; /* bits above the counter's width are reserved */
        return plain(&s->fixed_ctr[msr - FAKE_MSR_FIXED_CTR0], write, v);
    }
    if (msr == FAKE_MSR_FIXED_CTR_CTRL) {
        uint64_t valid = (1ull << (4 * fake.fixed_counters)) - 1;
        if (write && (*v & ~valid))
            return false;
        return plain(&s->fixed_ctrl, write, v);
    }
    if (msr == FAKE_MSR_GLOBAL_STATUS) {
        if (write)
            return false; /* read-only */
        *v = s->global_status;
        return true;
    }
    if (msr == FAKE_MSR_GLOBAL_CTRL) {
        if (write && (*v & ~(fixed_bits | gp_bits)))
            return false;
        return plain(&s->global_ctrl, write, v);
    }
    if (msr == FAKE_MSR_GLOBAL_OVF_CTRL) {
        uint64_t valid = fixed_bits | gp_bits | (3ull << 62) | (fake.intel_version >= 4 ? 1ull << 59 : 0);
        if (!write) {
            *v = 0;
            return true;
        }
        if (*v & ~valid)
            return false;
        s->global_status &= ~*v;
        if (*v & (1ull << 59))
            s->frozen = false;
        return true;
    }
    if (msr >= 0xC1 && msr < 0xC1 + fake.gp_counters)
        return plain(&s->pmc[msr - 0xC1], write, v);
    if (msr >= 0x186 && msr < 0x186 + fake.gp_counters)
        return plain(&s->evtsel[msr - 0x186], write, v);
    return false;
}

static bool amd_msr(struct fake_cpu_state *s, uint32_t msr, bool write, uint64_t *v)
{
    if (msr >= FAKE_MSR_AMD_CTL0 && msr < FAKE_MSR_AMD_CTL0 + 12) {
        unsigned n = (msr - FAKE_MSR_AMD_CTL0) / 2;
        if ((msr - FAKE_MSR_AMD_CTL0) % 2 == 0)
            return plain(&s->amd_ctl[n], write, v);
        if (write && (*v & ~width_mask()))
            return false;
        return plain(&s->amd_ctr[n], write, v);
    }
    if (!fake.amd_v2)
        return false;
    switch (msr) {
    case FAKE_MSR_AMD_GLOBAL_STATUS:
        if (write)
            return false;
        *v = s->amd_global_status;
        return true;
    case FAKE_MSR_AMD_GLOBAL_CTL:
        if (write && (*v & ~0x3Full))
            return false;
        return plain(&s->amd_global_ctl, write, v);
    case FAKE_MSR_AMD_GLOBAL_STATUS_CLR:
        if (write)
            s->amd_global_status &= ~*v;
        else
            *v = 0;
        return true;
    default:
        return false;
    }
}

static bool msr_access(uint32_t msr, bool write, uint64_t *v)
{
    struct fake_cpu_state *s = here();
    fake.msr_accesses++;
    fake.msr_writes += write;
    bool legacy = msr >= FAKE_MSR_AMD_LEGACY_FIRST && msr <= FAKE_MSR_AMD_LEGACY_LAST;
    if (legacy)
        fake.legacy_touches++;
    if (fake.gp_msr && msr == fake.gp_msr)
        return false;
    if (fake.swallow) {
        if (!write)
            *v = 0;
        return true;
    }
    if (legacy)
        return fake.legacy_gp ? false : plain(&s->legacy[msr - FAKE_MSR_AMD_LEGACY_FIRST], write, v);
    if (fake.pmu == FAKE_PMU_INTEL)
        return intel_msr(s, msr, write, v);
    if (fake.pmu == FAKE_PMU_AMD)
        return amd_msr(s, msr, write, v);
    return false;
}

/* ---- arch/x86_64/msr.h and arch/x86_64/pmu_hw.h --------------------------------------------------------- */

bool rdmsr_safe(uint32_t msr, uint64_t *v)
{
    advance_here(fake.cycles_per_call);
    uint64_t value = 0;
    bool ok = msr_access(msr, false, &value);
    if (ok)
        *v = value;
    deliver();
    return ok;
}

bool wrmsr_safe(uint32_t msr, uint64_t v)
{
    advance_here(fake.cycles_per_call);
    bool ok = msr_access(msr, true, &v);
    record(FAKE_WRMSR, msr, v, !ok);
    deliver();
    return ok;
}

static const struct fake_cpuid_entry *cpuid_entry(uint32_t leaf, uint32_t sub)
{
    const struct fake_cpuid_entry *any = 0;
    for (unsigned i = 0; i < fake.cpuid_count; i++) {
        const struct fake_cpuid_entry *e = &fake.cpuid[i];
        if (e->leaf != leaf || (e->sub != sub && !e->any_sub))
            continue;
        if (e->cpu == fake_cpu_index)
            return e;
        if (e->cpu == FAKE_ANY_CPU)
            any = e;
    }
    return any;
}

void pmu_hw_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    const struct fake_cpuid_entry *max_basic = cpuid_entry(0, 0);
    const struct fake_cpuid_entry *max_ext = cpuid_entry(0x80000000u, 0);
    uint32_t basic = max_basic ? max_basic->r[0] : 0, ext = max_ext ? max_ext->r[0] : 0;
    /* As Intel documents and QEMU does: a leaf above the maximum (basic or extended) answers with the highest
     * basic leaf's data. */
    if ((leaf < 0x40000000u && leaf > basic) || (leaf >= 0x80000000u && leaf > ext))
        leaf = basic;
    const struct fake_cpuid_entry *e = cpuid_entry(leaf, sub);
    for (unsigned i = 0; i < 4; i++)
        r[i] = e ? e->r[i] : 0;
}

void pmu_hw_lvtpc_write(uint32_t value)
{
    advance_here(fake.cycles_per_call);
    here()->lvtpc = value;
    fake.lvt_writes++;
    record(FAKE_LVT, 0, value, false);
    deliver();
}

uint32_t pmu_hw_lvtpc_read(void)
{
    advance_here(fake.cycles_per_call);
    uint32_t v = here()->lvtpc;
    deliver();
    return v;
}

uint64_t pmu_hw_cycles(void)
{
    advance_here(fake.cycles_per_call);
    uint64_t t = fake.tsc;
    deliver();
    return t;
}

unsigned pmu_hw_cpu(void) { return fake_cpu_index; }

/* ---- kernel/log.h ---------------------------------------------------------------------------------------- */

static void log_line(const char *prefix, const char *fmt, va_list ap)
{
    char line[256];
    size_t n = (size_t)snprintf(line, sizeof line, "%s", prefix);
    vsnprintf(line + n, sizeof line - n, fmt, ap);
    size_t used = strlen(fake.log_text);
    snprintf(fake.log_text + used, sizeof fake.log_text - used, "%s\n", line);
    fake.log_lines++;
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap);
    va_end(ap);
}
