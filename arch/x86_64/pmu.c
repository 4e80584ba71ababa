/* arch/x86_64/pmu.c: the performance-counter sample source behind hal/pmu.h. It owns the choice of backend
 * (once, at boot, from CPUID and the pmu= option), the probe that makes a counter CPUID claims prove that it
 * counts and interrupts, the published verdict, each CPU's armed state, and the NMI handler's decision "this
 * overflow is mine". The vendors (pmu_intel.c, pmu_amd.c) say which registers and bits, which CPUs are theirs
 * and what pmu=claim-<vendor> makes CPUID answer; the CPU's identity lscpu shows is cpu_identity.c's. The one
 * counter is driven here, and every access to hardware goes through arch/x86_64/pmu_hw.h. */
#include "hal/pmu.h"

#include <stdarg.h>
#include <stdatomic.h>

#include "arch/x86_64/cpu_identity.h"
#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "hal/compiler.h"
#include "hal/cpu.h"
#include "kernel/lib/format.h"
#include "kernel/log.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

/* The sampling period is about a millisecond of cycles, never below this: under it the NMI handler would be a
 * large share of what the CPU does. Also the probe's short period, so its overflow comes within microseconds. */
#define PERIOD_MIN_CYCLES 10000
/* How long the probe lets a counter take to move, interrupts off: cycles_per_ms() / 100, about 10 us. A
 * duration, not a number of PAUSEs (10 cycles on one part, 140 on the next); a live counter moves at once. */
#define PROBE_COUNT_DIVISOR 100
#define PROBE_NMI_MS 10 /* how long the probe waits for the overflow's NMI, interrupts on */
/* After a disarm that found the overflow already raised, how long its NMI may take to arrive and still be
 * claimed; after that a pending overflow bit is stale and an NMI is genuine. */
#define LATE_WINDOW_MS 1

/* pmu=auto, pmu=off, or pmu=claim-<vendor>: CPUID's PMU leaves answered as if the CPU claimed that vendor's PMU
 * (for a hypervisor that hides it, and for trying the probe's refusals). */
enum pmu_mode { MODE_AUTO, MODE_OFF, MODE_CLAIM };
#define CLAIM_PREFIX "claim-"
static const struct pmu_vendor *const vendors[] = { &pmu_intel_vendor, &pmu_amd_vendor };
#define VENDOR_COUNT (sizeof vendors / sizeof vendors[0])

/* Each CPU's own state. Written by the CPU itself -- from its tick, or from the probe -- and read by its own
 * NMI handler, which can interrupt it between any two instructions: so the flags are atomics ordered against
 * the MSR writes with signal fences (same CPU, no hardware barrier needed). Other CPUs only ever look. */
struct pmu_cpu {
    _Atomic bool armed;         /* set before the counter is enabled, cleared after it is disabled */
    _Atomic bool probing;       /* the probe's interrupt phase runs on this CPU, its NMIs counted below */
    _Atomic uint32_t probe_nmis;
    _Atomic bool late_pending;  /* disarmed with an overflow raised whose NMI had not arrived yet */
    _Atomic uint64_t late_deadline; /* TSC: until when that NMI may still be claimed */
    bool arm_failed;            /* arming faulted here: this CPU stays on the tick (tick context only) */
    uint64_t reload;            /* what this CPU's overflow reloads: the period's, or a throttled one's */
    uint64_t period;            /* that period, in counted cycles */
    /* Reads and writes of the LVT performance-counter entry by this CPU's NMI claim: each is an exit under a
     * hypervisor (an MMIO exit in xAPIC mode, a cheaper MSR exit in x2APIC mode). Written only by that NMI. */
    _Atomic uint64_t nmi_lvt_accesses;
} __attribute__((aligned(64)));

/* Chosen once by pmu_select(), read-only afterwards (the NMI path reads live). */
static bool selected;
static enum pmu_mode mode;
static const struct pmu_vendor *claim_as; /* MODE_CLAIM: whose PMU CPUID claims */
static char mode_name[24];      /* "auto", "off", "claim-intel": for the log and lscpu */
static bool have_backend;       /* a vendor init ran, claimed or not: live says what CPUID claims */
static struct pmu_backend live;
static char vendor_id[CPU_VENDOR_ID_SIZE];

/* Computed by the probe before the verdict is published; read by every CPU after it. */
static uint64_t width_mask;
static uint64_t sign_bit;
static uint64_t reload;         /* below_zero(period): what the counter is loaded with to count one period */
static uint64_t period_cycles;  /* that period */
/* Throttling doubles a CPU's period at most this many times (1 ms becomes 64 ms). */
#define THROTTLE_MAX_SHIFT 6

/* Learned by the probe from its own overflow's NMI: whether this machine's local APIC sets the LVT entry's mask
 * bit when it delivers the PMI (Intel SDM vol. 3A, "Local Vector Table": it does; older KVM did not). Where it
 * does, an overflow showing while the entry is still unmasked has not been delivered yet, and the NMI that
 * finds it so is another source's. */
static bool pmi_masks_lvt;

/* The verdict, published with release after reason and the values above are written. */
static _Atomic int verdict = PMU_NOT_PROBED;
static char reason[160];
static atomic_int probe_taken;  /* the first pmu_probe() caller runs it; others wait for the verdict */

/* The first MSR whose access faulted since the probe began, for the verdict's reason (not the clean-up's). */
static bool fault_seen;
static uint32_t fault_msr;

static struct pmu_cpu cpus[MAX_CPUS];

/* ---- CPUID and MSRs, as the backends see them -------------------------------------------------------- */

void pmu_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    pmu_hw_cpuid(leaf, sub, r);
    if (mode == MODE_CLAIM)
        claim_as->claim_cpuid(leaf, sub, r);
}

static NMI_TEXT bool faulted(uint32_t msr)
{
    if (!fault_seen) {
        fault_seen = true;
        fault_msr = msr;
    }
    return false;
}

NMI_TEXT bool pmu_rdmsr(uint32_t msr, uint64_t *v) { return rdmsr_safe(msr, v) || faulted(msr); }
NMI_TEXT bool pmu_wrmsr(uint32_t msr, uint64_t v) { return wrmsr_safe(msr, v) || faulted(msr); }

/* ---- the counter, the same on every backend --------------------------------------------------------- */

/* -n as the counter holds it: n counts below the overflow, masked to the width (the bits above it are
 * reserved, and writing them raises #GP). */
static uint64_t below_zero(uint64_t n) { return (0 - n) & width_mask; }

/* Loads value (within the counter's width) and enables counting, with the overflow interrupt or without. The
 * enable comes last (the global bit where there is one, else the control register), so the counter starts
 * from value. */
static bool counter_start(uint64_t value, bool interrupt)
{
    uint64_t ctl, global;
    if (!pmu_wrmsr(live.counter_msr, value))
        return false;
    if (!pmu_rdmsr(live.control_msr, &ctl))
        return false;
    ctl = (ctl & ~live.control_mask) | live.control_count | (interrupt ? live.control_interrupt : 0);
    if (!pmu_wrmsr(live.control_msr, ctl))
        return false;
    if (live.global_ctrl_msr) {
        if (!pmu_rdmsr(live.global_ctrl_msr, &global) ||
            !pmu_wrmsr(live.global_ctrl_msr, global | live.global_bit))
            return false;
    }
    return true;
}

/* Clears an overflow left in the global status (by firmware, or a run that ended with one pending), so the
 * next one that shows is the counter's own. Nothing to clear without a status register: loading the counter
 * resets its sign bit. */
static bool counter_clear_stale(void)
{
    return !live.global_ack_msr || pmu_wrmsr(live.global_ack_msr, live.global_bit);
}

/* Disables counting: the global bit first (it stops the counter at once), then this counter's control bits.
 * Both are attempted even if one faults, since this is also the clean-up after a fault. */
static NMI_TEXT bool counter_stop(void)
{
    bool ok = true;
    uint64_t v;
    if (live.global_ctrl_msr)
        ok = pmu_rdmsr(live.global_ctrl_msr, &v) && pmu_wrmsr(live.global_ctrl_msr, v & ~live.global_bit);
    return pmu_rdmsr(live.control_msr, &v) && pmu_wrmsr(live.control_msr, v & ~live.control_mask) && ok;
}

static bool counter_read(uint64_t *v)
{
    if (!pmu_rdmsr(live.counter_msr, v))
        return false;
    *v &= width_mask;
    return true;
}

/* Whether the counter has overflowed since it was last loaded: exactly, from the global status where the part
 * has one; otherwise from the sign bit, which stays set from -(period) until the counter passes zero. */
static inline NMI_TEXT bool counter_overflowed(void)
{
    uint64_t v;
    if (live.global_status_msr)
        return rdmsr_safe(live.global_status_msr, &v) && (v & live.global_bit);
    return rdmsr_safe(live.counter_msr, &v) && !(v & sign_bit);
}

/* After an overflow: the next period starts now, and the status bit is cleared so the next overflow shows. */
static inline NMI_TEXT void counter_reload_and_ack(struct pmu_cpu *c)
{
    wrmsr_safe(live.counter_msr, c->reload);
    if (live.global_ack_msr)
        wrmsr_safe(live.global_ack_msr, live.global_bit);
}

/* cpu_index() is below MAX_CPUS by contract once a CPU runs kernel code; only the NMI path, which can
 * interrupt a CPU before that holds, checks. */
static NMI_TEXT struct pmu_cpu *this_cpu(void) { return &cpus[pmu_hw_cpu()]; }

/* ---- choosing the backend (boot) ---------------------------------------------------------------------- */

static void publish(enum pmu_verdict v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void publish(enum pmu_verdict v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    /* release: reason, the width and the reload value are written before any CPU can see the verdict */
    atomic_store_explicit(&verdict, v, memory_order_release);
}

uint64_t pmu_period_cycles(void) { return pmu_usable() ? period_cycles : 0; }

/* The vendor whose counters this CPU has, by CPUID's vendor string; NULL when none is known. */
static const struct pmu_vendor *vendor_of_this_cpu(void)
{
    for (unsigned v = 0; v < VENDOR_COUNT; v++)
        for (const char *const *id = vendors[v]->cpuid_vendors; *id; id++)
            if (strcmp(vendor_id, *id) == 0)
                return vendors[v];
    return 0;
}

/* Sets mode (and claim_as) from the pmu= option's text; false when it is none of the values. */
static bool parse_mode(const char *text)
{
    mode = MODE_AUTO;
    if (!text || strcmp(text, "auto") == 0)
        return true;
    if (strcmp(text, "off") == 0) {
        mode = MODE_OFF;
        return true;
    }
    size_t prefix = strlen(CLAIM_PREFIX);
    for (unsigned v = 0; strncmp(text, CLAIM_PREFIX, prefix) == 0 && v < VENDOR_COUNT; v++) {
        if (strcmp(text + prefix, vendors[v]->name) == 0) {
            mode = MODE_CLAIM;
            claim_as = vendors[v];
            return true;
        }
    }
    return false;
}

/* "auto, off, claim-intel or claim-amd": the values pmu= takes, for the warning about one that is none. */
static void list_modes(char *buf, size_t cap)
{
    size_t n = ksnprintf(buf, cap, "auto, off");
    for (unsigned v = 0; v < VENDOR_COUNT && n < cap; v++)
        n += ksnprintf(buf + n, cap - n, "%s" CLAIM_PREFIX "%s", v + 1 == VENDOR_COUNT ? " or " : ", ",
                       vendors[v]->name);
}

void pmu_select(const char *text)
{
    if (selected)
        return;
    selected = true;

    if (!parse_mode(text)) {
        char modes[64];
        list_modes(modes, sizeof modes);
        log_warn("pmu: unknown pmu=%.32s (%s): using auto", text, modes);
    }
    if (mode == MODE_CLAIM)
        ksnprintf(mode_name, sizeof mode_name, CLAIM_PREFIX "%s", claim_as->name);
    else
        strlcpy(mode_name, mode == MODE_OFF ? "off" : "auto", sizeof mode_name);

    cpu_vendor_id(vendor_id);

    char why[sizeof reason];
    why[0] = 0;
    bool claimed = false;
    /* A claim picks its vendor's backend whatever the vendor string says. */
    const struct pmu_vendor *vendor = mode == MODE_CLAIM ? claim_as : vendor_of_this_cpu();
    if (vendor) {
        have_backend = true;
        claimed = vendor->init(&live, why, sizeof why);
    } else {
        ksnprintf(why, sizeof why, "no PMU backend for CPU vendor \"%s\"", vendor_id);
    }

    if (mode == MODE_OFF) {
        publish(PMU_DISABLED, "pmu=off on the kernel command line");
        log_info("pmu: off (pmu=off): profile samples on the tick");
    } else if (!claimed) {
        publish(PMU_NOT_CLAIMED, "%s", why);
        log_info("pmu: %s: profile samples on the tick", why);
    } else if (mode == MODE_AUTO) {
        log_info("pmu: %s backend, %s, claimed by CPUID; probed when first used", live.vendor, live.source);
    } else {
        log_info("pmu: %s backend, %s, claimed under pmu=%s; probed when first used", live.vendor, live.source,
                 mode_name);
    }
}

/* ---- the probe (task context, this CPU, interrupts off but for the NMI wait) ------------------------- */

/* Interrupts off, but for the NMI wait, which goes back to the caller's caller_flags: an NMI needs no IF, and
 * PROBE_NMI_MS is a thousand times the ~10 us the spec allows with them off. A task never leaves its CPU. */
static enum pmu_verdict run_probe(struct pmu_cpu *c, unsigned long caller_flags)
{
    uint64_t per_ms = cycles_per_ms();
    width_mask = live.width >= 64 ? ~0ull : (1ull << live.width) - 1;
    sign_bit = 1ull << (live.width - 1);
    uint64_t period = per_ms < PERIOD_MIN_CYCLES ? PERIOD_MIN_CYCLES : per_ms;
    if (period > sign_bit >> 1)
        period = sign_bit >> 1; /* keeps the sign bit meaningful; no part with >= 32 bits gets near it */
    reload = below_zero(period);
    period_cycles = period;

    if (live.prepare && !live.prepare(&live))
        return PMU_FAULTED;

    /* Does it count? Enabled without the interrupt bit and read until it moves. */
    uint64_t first, now;
    bool moved = false;
    if (!counter_start(0, false) || !counter_read(&first))
        goto fault;
    uint64_t t0 = pmu_hw_cycles();
    int64_t budget = (int64_t)(per_ms / PROBE_COUNT_DIVISOR);
    do {
        if (!counter_read(&now))
            goto fault;
        if (now != first) {
            moved = true;
            break;
        }
        cpu_relax();
    } while ((int64_t)(pmu_hw_cycles() - t0) < budget);
    if (!counter_stop())
        goto fault;
    if (!moved)
        return PMU_DOES_NOT_COUNT;

    /* Does its overflow arrive as an NMI? A short period with the interrupt bit, the LVT entry in NMI mode,
     * and this CPU's NMI handler counting what it claims while the probing flag is up (and noting whether the
     * entry was masked by the delivery). */
    pmi_masks_lvt = false;
    uint32_t saved_lvt = pmu_hw_lvtpc_read();
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI);
    atomic_store_explicit(&c->probe_nmis, 0, memory_order_relaxed);
    c->reload = reload;
    c->period = period_cycles;
    atomic_store_explicit(&c->probing, true, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    bool ok = counter_clear_stale() && counter_start(below_zero(PERIOD_MIN_CYCLES), true);
    t0 = pmu_hw_cycles();
    budget = (int64_t)(per_ms * PROBE_NMI_MS);
    irq_restore(caller_flags);
    while (ok && atomic_load_explicit(&c->probe_nmis, memory_order_relaxed) == 0 &&
           (int64_t)(pmu_hw_cycles() - t0) < budget)
        cpu_relax();
    (void)irq_save();
    /* No late window here: an NMI that took longer than the whole wait is not one to wait for. */
    ok = counter_stop() && ok;
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&c->probing, false, memory_order_relaxed);
    pmu_hw_lvtpc_write(saved_lvt);
    if (!ok)
        return PMU_FAULTED;
    return atomic_load_explicit(&c->probe_nmis, memory_order_relaxed) ? PMU_COUNTS : PMU_NO_INTERRUPT;

fault:
    counter_stop();
    return PMU_FAULTED;
}

enum pmu_verdict pmu_probe(void)
{
    if (!selected)
        pmu_select(0);
    enum pmu_verdict v = pmu_verdict();
    if (v != PMU_NOT_PROBED)
        return v;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&probe_taken, &expected, 1)) {
        /* Another CPU is probing; its answer is at most ~10 ms away. */
        while ((v = pmu_verdict()) == PMU_NOT_PROBED)
            cpu_relax();
        return v;
    }

    /* The count's spin (~10 us) with nothing else run between its reads; run_probe lets them in to wait. */
    unsigned long flags = irq_save();
    fault_seen = false;
    v = run_probe(this_cpu(), flags);
    irq_restore(flags);

    /* Where the claim came from, for the reasons of the verdicts that contradict it. */
    char claim[48];
    if (mode == MODE_CLAIM)
        ksnprintf(claim, sizeof claim, "pmu=%s made CPUID claim a PMU", mode_name);
    else
        strlcpy(claim, "CPUID claims a PMU", sizeof claim);
    switch (v) {
    case PMU_COUNTS:
        publish(v, "the counter counts and its overflow arrives as an NMI");
        break;
    case PMU_DOES_NOT_COUNT:
        publish(v, "the counter does not count (%s; writes are swallowed)", claim);
        break;
    case PMU_NO_INTERRUPT:
        publish(v, "the counter counts, but its overflow raised no NMI within %u ms", PROBE_NMI_MS);
        break;
    default:
        publish(PMU_FAULTED, "MSR 0x%x raised #GP while probing (%s)", fault_msr, claim);
        break;
    }
    return pmu_verdict();
}

enum pmu_verdict pmu_verdict(void)
{
    return (enum pmu_verdict)atomic_load_explicit(&verdict, memory_order_acquire);
}

bool pmu_usable(void) { return pmu_verdict() == PMU_COUNTS; }

const char *pmu_source_name(void) { return pmu_usable() ? live.source : 0; }

const char *pmu_verdict_reason(void)
{
    if (!selected)
        return "not selected yet";
    if (pmu_verdict() == PMU_NOT_PROBED)
        return "not probed yet (CPUID claims a PMU)";
    return reason;
}

/* ---- arming, on each CPU's own tick ------------------------------------------------------------------- */

bool pmu_arm_this_cpu(void)
{
    struct pmu_cpu *c = this_cpu();
    if (!pmu_usable())
        return false;
    if (atomic_load_explicit(&c->armed, memory_order_relaxed))
        return true;
    if (c->arm_failed)
        return false;

    atomic_store_explicit(&c->late_pending, false, memory_order_relaxed);
    c->reload = reload;
    c->period = period_cycles;
    bool ok = (!live.prepare || live.prepare(&live)) && counter_clear_stale();
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI);
    /* The flag first: the overflow can come the moment the counter is enabled, and must find it set. */
    atomic_store_explicit(&c->armed, true, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (ok && counter_start(reload, true))
        return true;

    counter_stop();
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&c->armed, false, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI | LVT_MASK_BIT); /* as a disarm leaves it */
    c->arm_failed = true;
    return false;
}

NMI_TEXT void pmu_disarm_this_cpu(void)
{
    struct pmu_cpu *c = this_cpu();
    if (!atomic_load_explicit(&c->armed, memory_order_relaxed))
        return;
    /* An overflow raised before the counter stopped may have its NMI still on the way: it is this CPU's to
     * claim for a short while (pmu_nmi_is_mine), as long as the overflow still shows. */
    if (counter_stop() && counter_overflowed()) {
        uint64_t deadline = pmu_hw_cycles() + cycles_per_ms() * LATE_WINDOW_MS;
        atomic_store_explicit(&c->late_deadline, deadline, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* the deadline before the flag that makes it count */
        atomic_store_explicit(&c->late_pending, true, memory_order_relaxed);
    }
    /* The flag before the mask, and after the late claim is set up: an NMI arriving before the flag finds the
     * counter armed, one after it finds the late claim (an overflow raised before the stop) or nothing, and
     * neither unmasks the entry once the flag is down (pmu_nmi_is_mine). */
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&c->armed, false, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    /* Masked: a counter left running (a disarm that faulted, a hypervisor that ignored it) raises no NMI, and
     * lscpu and `monitor pmu` show the entry as a run leaves it. */
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI | LVT_MASK_BIT);
}

NMI_TEXT bool pmu_armed_this_cpu(void)
{
    return atomic_load_explicit(&this_cpu()->armed, memory_order_relaxed);
}


uint64_t pmu_throttle_this_cpu(void)
{
    struct pmu_cpu *c = this_cpu();
    uint64_t doubled = c->period * 2;
    /* The limit keeps the sign bit meaningful on AMD without a status register, as the probe's period does. */
    if (doubled <= period_cycles << THROTTLE_MAX_SHIFT && doubled <= sign_bit >> 1) {
        c->period = doubled;
        c->reload = below_zero(doubled); /* from the next overflow on: the NMI reloads c->reload */
    }
    return c->period;
}

/* ---- the NMI ------------------------------------------------------------------------------------------ */

/* The NMI claim's LVT accesses, counted for this CPU: a load and a store, no locked instruction, as the NMI is
 * the counter's only writer and does not nest. */
static inline NMI_TEXT void count_lvt_access(struct pmu_cpu *c)
{
    uint64_t n = atomic_load_explicit(&c->nmi_lvt_accesses, memory_order_relaxed);
    atomic_store_explicit(&c->nmi_lvt_accesses, n + 1, memory_order_relaxed);
}

static inline NMI_TEXT uint32_t nmi_lvt_read(struct pmu_cpu *c)
{
    count_lvt_access(c);
    return pmu_hw_lvtpc_read();
}

static inline NMI_TEXT void nmi_lvt_write(struct pmu_cpu *c, uint32_t value)
{
    count_lvt_access(c);
    pmu_hw_lvtpc_write(value);
}

NMI_TEXT bool pmu_nmi_is_mine(void)
{
    unsigned cpu = pmu_hw_cpu();
    if (cpu >= MAX_CPUS)
        return false;
    struct pmu_cpu *c = &cpus[cpu];
    bool probing = atomic_load_explicit(&c->probing, memory_order_relaxed);
    bool armed = atomic_load_explicit(&c->armed, memory_order_relaxed); /* no disarm runs inside an NMI */
    if (!probing && !armed) {
        /* Not armed: never the counter's -- a disarmed counter keeps whatever it stopped at, and on AMD before
         * Zen 4 that value cannot tell a stale overflow from a fresh one -- except once, shortly after a
         * disarm that found an overflow already raised. */
        if (!atomic_load_explicit(&c->late_pending, memory_order_relaxed))
            return false;
        atomic_store_explicit(&c->late_pending, false, memory_order_relaxed);
        uint64_t deadline = atomic_load_explicit(&c->late_deadline, memory_order_relaxed);
        if ((int64_t)(pmu_hw_cycles() - deadline) > 0)
            return false;
    }
    if (!counter_overflowed())
        return false;
    /* The overflow shows, but where the PMI's delivery masks the entry and the entry is unmasked, the PMI is
     * still on its way: this NMI is someone else's (a genuine one), and the PMI will follow as its own NMI. The
     * probe learns which kind of machine this is from its own NMI, so it does not ask. */
    if (probing) {
        if (nmi_lvt_read(c) & LVT_MASK_BIT)
            pmi_masks_lvt = true;
    } else if (pmi_masks_lvt && !(nmi_lvt_read(c) & LVT_MASK_BIT)) {
        return false;
    }
    counter_reload_and_ack(c);
    /* The LAPIC may have masked the entry when it delivered the PMI: unmasked, in NMI mode, for the next -- but
     * a late overflow's, after the disarm, leaves it masked as the disarm did. */
    nmi_lvt_write(c, probing || armed ? LVT_DELIVERY_NMI : LVT_DELIVERY_NMI | LVT_MASK_BIT);
    if (probing)
        atomic_fetch_add_explicit(&c->probe_nmis, 1, memory_order_relaxed);
    return true;
}

/* ---- what pmu_report.c reads ----------------------------------------------------------------------- */

void pmu_report_view(struct pmu_view *v)
{
    v->have_backend = have_backend;
    v->live = &live;
    v->vendor_id = vendor_id;
    v->mode_name = mode == MODE_AUTO ? 0 : mode_name;
    v->mode_off = mode == MODE_OFF;
    v->pmi_masks_lvt = pmi_masks_lvt;
}

NMI_TEXT bool pmu_cpu_view(unsigned cpu, struct pmu_cpu_view *v)
{
    if (cpu >= MAX_CPUS)
        return false;
    const struct pmu_cpu *c = &cpus[cpu];
    v->armed = atomic_load_explicit(&c->armed, memory_order_relaxed);
    v->probing = atomic_load_explicit(&c->probing, memory_order_relaxed);
    v->late_pending = atomic_load_explicit(&c->late_pending, memory_order_relaxed);
    v->arm_failed = c->arm_failed;
    v->nmi_lvt_accesses = atomic_load_explicit(&c->nmi_lvt_accesses, memory_order_relaxed);
    return true;
}

#ifdef KPROF_HOST
void pmu_reset_for_tests(void)
{
    selected = false;
    mode = MODE_AUTO;
    claim_as = 0;
    mode_name[0] = 0;
    have_backend = false;
    memset(&live, 0, sizeof live);
    memset(vendor_id, 0, sizeof vendor_id);
    width_mask = sign_bit = reload = period_cycles = 0;
    pmi_masks_lvt = false;
    atomic_store(&verdict, PMU_NOT_PROBED);
    atomic_store(&probe_taken, 0);
    reason[0] = 0;
    fault_seen = false;
    fault_msr = 0;
    memset(cpus, 0, sizeof cpus);
}
#endif
