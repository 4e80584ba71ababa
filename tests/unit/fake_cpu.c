/* tests/unit/fake_cpu.c: the stateful fake CPU of tests/unit/fake_cpu.h -- arch/x86_64/pmu_hw.h and msr.h
 * answered from a model of CPUID, the PMU MSRs of Intel arch perfmon and of AMD's core extension (with
 * PerfMonV2), the legacy AMD counters, the LVT performance-counter entry and NMI delivery. (The kernel's log
 * goes to the fake kernel's console, tests/unit/fake_kernel.c; fake_reset() empties it.) Time advances only when
 * the code under test touches the fake (each pmu_hw call takes fake.cycles_per_call cycles) or a test says so;
 * counters count only on the CPU whose time advances. The MSR file is as strict as the manuals (Intel SDM vol.
 * 3B "Performance Monitoring", AMD APM vol. 2 "Performance Counters" and the Zen 4 PPR's PerfMonV2): an MSR the
 * CPU does not have, a reserved bit set, or a write to a read-only status register is a #GP, and an overflow
 * stays in the status until the clear register clears it. Which counters exist and how wide they are is read
 * from the model's own CPUID (tests/unit/fake_cpu_models.c). The machines themselves are
 * tests/unit/fake_cpu_models.c. */
#include "fake_cpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/log.h"
#include "fake_kernel.h"

struct fake_machine fake;

/* ---- setup -------------------------------------------------------------------------------------------- */

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
    fake_log_reset(); /* the log is the fake kernel's console now, reset with the machine as before */
    fake.cycles_per_call = 100;
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        fake.cpu[i].lvtpc = LVT_MASK_BIT; /* the reset value: masked */
    fake_cpu_index = 0;
}

void fake_boot(void (*model)(void), bool (*nmi_handler)(void))
{
    fake_reset();
    model();
    pmu_reset_for_tests();
    pmu_select(NULL);
    fake.nmi_handler = nmi_handler;
    fake_cpu_count = FAKE_CPUS;
    fake_cpu_index = 0;
    fake_tick_hz = TICK_HZ_DEFAULT;
    memset(fake_idle_waits, 0, sizeof fake_idle_waits);
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
        .armed = pmu_armed_this_cpu(), /* an NMI's gate clears IF */
        .irqs_on = irq_enabled() && !fake.cpu[fake_cpu_index % FAKE_CPUS].in_nmi,
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

/* ---- what the manuals say this CPU has ------------------------------------------------------------------ */

static struct fake_cpu_state *here(void) { return &fake.cpu[fake_cpu_index % FAKE_CPUS]; }

static uint64_t bits_below(unsigned n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

/* Intel's PMU on this CPU, from its own CPUID leaf 0xA (SDM vol. 3B, "Architectural Performance Monitoring"):
 * EAX[7:0] the version, EAX[15:8] general counters, EAX[23:16] their width; from v2 EDX[4:0] contiguous fixed
 * counters and EDX[12:5] their width; from v5 ECX a bitmap of further fixed counters, and EDX[15] saying
 * AnyThread is deprecated (its bits reserved). */
struct intel_pmu {
    unsigned version, general, general_width, fixed_width;
    uint32_t fixed;  /* bit i: fixed counter i exists */
    bool any_thread; /* the AnyThread bits are defined (v3 and v4; v5 unless deprecated) */
};

static struct intel_pmu intel_here(void)
{
    uint32_t r[4];
    pmu_hw_cpuid(0xA, 0, r);
    struct intel_pmu p = {
        .version = r[0] & 0xFF, .general = (r[0] >> 8) & 0xFF, .general_width = (r[0] >> 16) & 0xFF,
    };
    if (p.version >= 2) {
        unsigned contiguous = r[3] & 0x1F;
        p.fixed = (uint32_t)bits_below(contiguous < 4 ? contiguous : 4);
        p.fixed_width = (r[3] >> 5) & 0xFF;
    }
    if (p.version >= 5)
        p.fixed |= r[2] & 0xF;
    p.any_thread = p.version == 3 || p.version == 4 || (p.version >= 5 && !(r[3] & (1u << 15)));
    return p;
}

/* This CPU's counters as bits of the global registers: general counters from bit 0, fixed ones from bit 32. */
static uint64_t intel_counter_bits(const struct intel_pmu *p)
{
    return bits_below(p->general) | (uint64_t)p->fixed << 32;
}

#define INTEL_STATUS_LBR_FRZ (1ull << 58)
#define INTEL_STATUS_CTR_FRZ (1ull << 59)
#define INTEL_STATUS_OVF_BUF (1ull << 62)
#define INTEL_STATUS_COND_CHGD (1ull << 63)
/* The status bits other than the counters' that OVF_CTRL (v4: STATUS_RESET) may clear and, from v4,
 * STATUS_SET may set: OvfBuf and CondChgd from v2; v3 adds Ovf_Uncore (61); v4 LBR_Frz, CTR_Frz, ASCI (60). */
static uint64_t intel_status_extra(const struct intel_pmu *p)
{
    uint64_t bits = INTEL_STATUS_OVF_BUF | INTEL_STATUS_COND_CHGD;
    if (p->version >= 3)
        bits |= 1ull << 61;
    if (p->version >= 4)
        bits |= INTEL_STATUS_LBR_FRZ | INTEL_STATUS_CTR_FRZ | (1ull << 60);
    return bits;
}

/* AMD's core counters: six with PerfCtrExtCore; PerfMonV2 says how many in CPUID 0x80000022 EBX[3:0]. */
static unsigned amd_counters(void)
{
    if (!fake.amd_v2)
        return 6;
    uint32_t r[4];
    pmu_hw_cpuid(0x80000022u, 0, r);
    unsigned n = r[1] & 0xF;
    return n ? n : 6;
}

/* PERF_CTL's reserved bits (APM vol. 2, "Performance Counters"): 19, 21, 39:36 and 63:42. Event select 7:0 and
 * 35:32, unit mask, USR, OS, Edge, INT, EN, INV, counter mask and HostOnly/GuestOnly (41:40) are defined. */
#define AMD_CTL_RESERVED ((1ull << 19) | (1ull << 21) | (0xFull << 36) | (~0ull << 42))

/* ---- time, counting, overflow, the PMI ------------------------------------------------------------------ */

static void pmi_through_lvt(struct fake_cpu_state *s);

/* The counter overflowed with its interrupt bit set: the PMI goes through the LVT entry, and becomes an NMI
 * only if the entry is unmasked and its delivery mode is NMI. */
static void raise_pmi(struct fake_cpu_state *s)
{
    if (!fake.interrupts)
        return;
    if (fake.pmu == FAKE_PMU_INTEL && (s->debugctl & (1u << 12))) {
        /* FREEZE_PERFMON_ON_PMI: before v4 the global enables are cleared; from v4 the counters freeze
         * until status bit 59 (CTR_FRZ) is cleared. Either way they stop. */
        fake.freezes++;
        if (intel_here().version >= 4) {
            s->frozen = true;
            s->global_status |= INTEL_STATUS_CTR_FRZ;
        } else {
            s->global_ctrl = 0;
        }
    }
    if (fake.hold_pmis) {
        s->pmi_waiting = true;
        return;
    }
    pmi_through_lvt(s);
}

/* The local APIC delivering a PMI through the LVT performance-counter entry: an NMI only when the entry is
 * unmasked and in NMI mode, and the entry masked on delivery where the model does (SDM vol. 3B, "Generating
 * an Interrupt on Overflow"; the APM describes the same LVT). */
static void pmi_through_lvt(struct fake_cpu_state *s)
{
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
static bool count(uint64_t *ctr, uint64_t cycles, unsigned width)
{
    uint64_t next = *ctr + cycles;
    bool wrapped = next > bits_below(width);
    *ctr = next & bits_below(width);
    return wrapped;
}

static void advance_here(uint64_t cycles)
{
    struct fake_cpu_state *s = here();
    fake.tsc += cycles;
    if (!fake.counts || fake.swallow)
        return;
    if (fake.pmu == FAKE_PMU_INTEL) {
        struct intel_pmu p = intel_here();
        for (unsigned i = 0; i < 4; i++) {
            uint64_t field = s->fixed_ctrl >> (4 * i);
            bool on = (p.fixed & (1u << i)) && (field & 1) && (s->global_ctrl & (1ull << (32 + i))) &&
                      !s->frozen; /* OS: ring 0 */
            if (on && count(&s->fixed_ctr[i], cycles, p.fixed_width)) {
                /* latched until OVF_CTRL / STATUS_RESET clears it; nothing else does */
                s->global_status |= 1ull << (32 + i);
                if (field & 8)
                    raise_pmi(s);
            }
        }
    } else if (fake.pmu == FAKE_PMU_AMD) {
        unsigned n = amd_counters();
        for (unsigned i = 0; i < n && i < 6; i++) {
            uint64_t ctl = s->amd_ctl[i];
            uint64_t event = (ctl & 0xFF) | ((ctl >> 24) & 0xF00);
            bool on = (ctl & (1ull << 22)) && (ctl & (1ull << 17)) && event == 0x76 &&
                      (!fake.amd_v2 || (s->amd_global_ctl & (1ull << i)));
            if (on && count(&s->amd_ctr[i], cycles, fake.width)) {
                if (fake.amd_v2)
                    s->amd_global_status |= 1ull << i; /* latched until PerfCntrGlobalStatusClr */
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
    if (!s->in_nmi)
        s->boundary++;
    while (s->nmi_pending && !s->in_nmi && !fake.hold_nmis) {
        s->nmi_pending = false;
        unsigned slot = fake.log_len;
        /* logged where it arrives (irqs_on: the interrupted code's); what the handler said is filled in after */
        record(FAKE_NMI, 0, 0, false);
        s->in_nmi = true;
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

void fake_release_pmis(void)
{
    struct fake_cpu_state *s = here();
    fake.hold_pmis = false;
    if (s->pmi_waiting) {
        s->pmi_waiting = false;
        pmi_through_lvt(s);
    }
    deliver();
}

/* ---- the MSR file: false is a #GP ---------------------------------------------------------------------- */

/* A read-only status register: a write is a #GP. */
static bool read_only(uint64_t r, bool write, uint64_t *v)
{
    if (write)
        return false;
    *v = r;
    return true;
}

/* A register that stores what is written, with valid the bits a write may set: any other bit set is a #GP. */
static bool reg(uint64_t *r, bool write, uint64_t *v, uint64_t valid)
{
    if (!write) {
        *v = *r;
        return true;
    }
    if (*v & ~valid)
        return false;
    *r = *v;
    return true;
}

/* IA32_DEBUGCTL: LBR, BTF (bits 0, 1) and bits 6..12 (TR .. FREEZE_PERFMON_ON_PMI) from the first PMU on; 13..15
 * (uncore PMI, FREEZE_WHILE_SMM, RTM_DEBUG) on the parts with v4. Bits 5:2 and 63:16 are reserved. */
static uint64_t intel_debugctl_valid(const struct intel_pmu *p)
{
    return 0x3ull | (0x7Full << 6) | (p->version >= 4 ? 0x7ull << 13 : 0);
}

/* Status bits changed by OVF_CTRL/STATUS_RESET (clear) or STATUS_SET (set); the freeze follows CTR_Frz. */
static void intel_status_update(struct fake_cpu_state *s, uint64_t bits, bool set)
{
    if (set)
        s->global_status |= bits;
    else
        s->global_status &= ~bits;
    if (bits & INTEL_STATUS_CTR_FRZ)
        s->frozen = set;
}

static bool intel_msr(struct fake_cpu_state *s, uint32_t msr, bool write, uint64_t *v)
{
    struct intel_pmu p = intel_here();
    uint64_t counters = intel_counter_bits(&p);
    if (msr == FAKE_MSR_DEBUGCTL)
        return reg(&s->debugctl, write, v, intel_debugctl_valid(&p));
    if (msr >= 0xC1 && msr < 0xC1 + p.general) {
        /* A write through the legacy address takes bits 31:0, sign-extended to the counter's width. */
        if (write)
            *v = (uint64_t)(int64_t)(int32_t)(uint32_t)*v & bits_below(p.general_width);
        return reg(&s->pmc[msr - 0xC1], write, v, ~0ull);
    }
    if (msr >= 0x186 && msr < 0x186 + p.general) {
        /* IA32_PERFEVTSELx: 63:32 reserved, and bit 21 (AnyThread) where it is not defined. */
        uint64_t valid = 0xFFFFFFFFull & ~(p.any_thread ? 0 : 1ull << 21);
        return reg(&s->evtsel[msr - 0x186], write, v, valid);
    }
    if (p.version < 2)
        return false; /* v1: no fixed counters and no global registers */
    if (msr >= FAKE_MSR_FIXED_CTR0 && msr < FAKE_MSR_FIXED_CTR0 + 4 && (p.fixed & (1u << (msr - FAKE_MSR_FIXED_CTR0))))
        return reg(&s->fixed_ctr[msr - FAKE_MSR_FIXED_CTR0], write, v, bits_below(p.fixed_width));
    switch (msr) {
    case FAKE_MSR_FIXED_CTR_CTRL: {
        /* Per fixed counter i, bits 4i..4i+3: OS, USR, AnyThread (where defined), PMI. A missing counter's
         * field is reserved. */
        uint64_t valid = 0, field = 0xBull | (p.any_thread ? 0x4 : 0);
        for (unsigned i = 0; i < 4; i++)
            if (p.fixed & (1u << i))
                valid |= field << (4 * i);
        return reg(&s->fixed_ctrl, write, v, valid);
    }
    case FAKE_MSR_GLOBAL_STATUS:
        return read_only(s->global_status, write, v);
    case FAKE_MSR_GLOBAL_CTRL:
        return reg(&s->global_ctrl, write, v, counters);
    case FAKE_MSR_GLOBAL_OVF_CTRL: /* v4: IA32_PERF_GLOBAL_STATUS_RESET, the same address and bits, and more */
    case FAKE_MSR_GLOBAL_STATUS_SET:
        if (msr == FAKE_MSR_GLOBAL_STATUS_SET && p.version < 4)
            return false;
        if (!write) {
            *v = 0;
            return true;
        }
        uint64_t valid = counters | intel_status_extra(&p);
        if (msr == FAKE_MSR_GLOBAL_STATUS_SET)
            valid &= ~INTEL_STATUS_COND_CHGD; /* the hardware alone sets CondChgd */
        if (*v & ~valid)
            return false;
        intel_status_update(s, *v, msr == FAKE_MSR_GLOBAL_STATUS_SET);
        return true;
    default:
        return false;
    }
}

/* PERF_CTL n / PERF_CTR n of the core counters, wherever they are addressed from. */
static bool amd_counter(struct fake_cpu_state *s, unsigned n, bool ctl, bool write, uint64_t *v)
{
    if (ctl)
        return reg(&s->amd_ctl[n], write, v, ~AMD_CTL_RESERVED);
    return reg(&s->amd_ctr[n], write, v, bits_below(fake.width)); /* 63:48 reserved */
}

static bool amd_msr(struct fake_cpu_state *s, uint32_t msr, bool write, uint64_t *v)
{
    unsigned n = amd_counters();
    if (msr >= FAKE_MSR_AMD_CTL0 && msr < FAKE_MSR_AMD_CTL0 + 2 * n && n <= 6)
        return amd_counter(s, (msr - FAKE_MSR_AMD_CTL0) / 2, (msr - FAKE_MSR_AMD_CTL0) % 2 == 0, write, v);
    /* With PerfCtrExtCore the legacy PerfEvtSel0..3 and PerfCtr0..3 are the first four core counters again. */
    if (msr >= FAKE_MSR_AMD_LEGACY_FIRST && msr <= FAKE_MSR_AMD_LEGACY_LAST) {
        unsigned i = msr - FAKE_MSR_AMD_LEGACY_FIRST;
        return amd_counter(s, i % 4, i < 4, write, v);
    }
    if (!fake.amd_v2)
        return false; /* no global registers before PerfMonV2 */
    uint64_t counters = bits_below(n);
    switch (msr) {
    case FAKE_MSR_AMD_GLOBAL_STATUS:
        return read_only(s->amd_global_status, write, v);
    case FAKE_MSR_AMD_GLOBAL_CTL:
        return reg(&s->amd_global_ctl, write, v, counters);
    case FAKE_MSR_AMD_GLOBAL_STATUS_CLR:
    case FAKE_MSR_AMD_GLOBAL_STATUS_SET:
        if (!write) {
            *v = 0;
            return true;
        }
        if (*v & ~counters)
            return false;
        if (msr == FAKE_MSR_AMD_GLOBAL_STATUS_SET)
            s->amd_global_status |= *v;
        else
            s->amd_global_status &= ~*v;
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
    if (legacy && fake.legacy_gp)
        return false;
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

/* The LVT performance-counter entry (SDM vol. 3A, "Local Vector Table"): vector 7:0, delivery mode 10:8 --
 * Fixed, SMI or NMI; INIT and ExtINT are not supported for this entry -- delivery status 12 (read-only) and
 * mask 16. Through the xAPIC's MMIO window a bad write does not fault: reserved bits are dropped, and a
 * delivery mode the entry does not support, or an unmasked Fixed entry with a vector below 16 (an illegal
 * vector), is an APIC error. The fake counts those in fake.lvt_bad_writes. */
#define LVT_WRITABLE (0xFFu | LVT_DELIVERY_MASK | LVT_MASK_BIT)
#define LVT_DELIVERY_STATUS (1u << 12)

static bool lvt_write_is_bad(uint32_t value)
{
    uint32_t mode = value & LVT_DELIVERY_MASK;
    if (value & ~(LVT_WRITABLE | LVT_DELIVERY_STATUS))
        return true;
    if (mode != 0 && mode != 0x200 && mode != LVT_DELIVERY_NMI)
        return true;
    return mode == 0 && !(value & LVT_MASK_BIT) && (value & 0xFF) < 16;
}

void pmu_hw_lvtpc_write(uint32_t value)
{
    advance_here(fake.cycles_per_call);
    fake.lvt_bad_writes += lvt_write_is_bad(value);
    here()->lvtpc = value & LVT_WRITABLE;
    fake.lvt_writes++;
    here()->lvt_in_nmi += here()->in_nmi;
    record(FAKE_LVT, 0, value, false);
    deliver();
}

uint32_t pmu_hw_lvtpc_read(void)
{
    advance_here(fake.cycles_per_call);
    uint32_t v = here()->lvtpc;
    fake.lvt_reads++;
    here()->lvt_in_nmi += here()->in_nmi;
    deliver();
    return v;
}

const char *pmu_hw_lvtpc_name(void) { return fake.x2apic ? "x2APIC MSR 0x834" : "LAPIC 0x340"; }
const char *pmu_hw_apic_mode(void) { return fake.x2apic ? "x2APIC" : "xAPIC (no x2APIC in CPUID)"; }

uint64_t pmu_hw_cycles(void)
{
    advance_here(fake.cycles_per_call);
    uint64_t t = fake.tsc;
    deliver();
    return t;
}

unsigned pmu_hw_cpu(void) { return fake_cpu_index; }
