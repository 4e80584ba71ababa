/* tests/unit/test_pmu_intel.c: the PMU sample source (arch/x86_64/pmu.c, pmu_intel.c) on the fake CPU's Intel
 * models -- v2, v4 with the freeze bit set by firmware, v5 with its fixed-counter bitmap, hybrid: what the probe
 * concludes, which MSRs are written in which order (freeze cleared before anything is enabled, the armed flag up
 * before the counter is enabled and down only after it is disabled), which NMIs are the counter's -- including an
 * overflow in flight at disarm -- and lscpu's text. Every test ends with pmu_fixture.c's invariants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_kernel.h"
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/lib/sink.h"
#include "pmu_fixture.h"
#include "unit_main.h"

/* ---- Intel v2 ------------------------------------------------------------------------------------------ */

static void intel_v2_probe_counts(void **state)
{
    (void)state;
    const uint64_t m40 = MASK(40);
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(fake.msr_accesses, 0); /* choosing reads CPUID only */
    assert_int_equal(pmu_verdict(), PMU_NOT_PROBED);
    assert_false(pmu_usable());
    assert_null(pmu_source_name());
    assert_string_equal(fake_log_text, "pmu: intel backend, pmu/nmi intel fixed-ctr1, claimed by CPUID; "
                                       "probed when first used\n");

    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_usable());
    assert_string_equal(pmu_source_name(), "pmu/nmi intel fixed-ctr1");
    assert_string_equal(pmu_verdict_reason(), "the counter counts and its overflow arrives as an NMI");

    /* The whole probe, write by write: count without the PMI bit, stop; then the LVT entry in NMI mode, the
     * status clear, and a short period with the PMI bit; the NMI reloads a full period (masked to 40 bits),
     * acknowledges and unmasks; stop again, and the LVT entry goes back to what it was. */
    unsigned i = 0;
    expect_write(i++, FAKE_MSR_FIXED_CTR1, 0);
    expect_write(i++, FAKE_MSR_FIXED_CTR_CTRL, FIXED1_COUNT);
    expect_write(i++, FAKE_MSR_GLOBAL_CTRL, BIT(33));
    expect_write(i++, FAKE_MSR_GLOBAL_CTRL, 0);
    expect_write(i++, FAKE_MSR_FIXED_CTR_CTRL, 0);
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i++, FAKE_MSR_GLOBAL_OVF_CTRL, BIT(33)); /* no stale overflow taken for the probe's */
    expect_write(i++, FAKE_MSR_FIXED_CTR1, (0 - 10000ull) & m40);
    expect_write(i++, FAKE_MSR_FIXED_CTR_CTRL, FIXED1_COUNT | FIXED1_PMI);
    expect_write(i++, FAKE_MSR_GLOBAL_CTRL, BIT(33));
    expect_nmi(i++, true);
    expect_write(i++, FAKE_MSR_FIXED_CTR1, (0 - MS) & m40);
    expect_write(i++, FAKE_MSR_GLOBAL_OVF_CTRL, BIT(33));
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i++, FAKE_MSR_GLOBAL_CTRL, 0);
    expect_write(i++, FAKE_MSR_FIXED_CTR_CTRL, 0);
    expect_lvt(i++, LVT_MASK_BIT);
    assert_int_equal(fake.log_len, i);

    /* Every access with interrupts off, and never armed (the probe has its own flag); the NMI came while the
     * probe waited for it with interrupts on (an NMI needs no IF). */
    for (unsigned k = 0; k < fake.log_len; k++) {
        assert_int_equal(fake.log[k].irqs_on, fake.log[k].kind == FAKE_NMI);
        assert_false(fake.log[k].armed);
    }
    assert_true(irq_enabled());
    assert_int_equal(fake.nmis_mine, 1);
    assert_int_equal(fake.nmis_genuine, 0);
}

static void intel_v2_arm_run_disarm(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);

    unsigned from = fake.log_len;
    assert_false(pmu_armed_this_cpu());
    assert_true(pmu_arm_this_cpu());
    assert_true(pmu_armed_this_cpu());
    /* A stale overflow cleared, the LVT entry in NMI mode, then -- with the flag already up -- the counter
     * loaded and enabled, the global enable last. */
    unsigned i = from;
    expect_write(i++, FAKE_MSR_GLOBAL_OVF_CTRL, BIT(33));
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i, FAKE_MSR_FIXED_CTR1, (0 - MS) & MASK(40));
    assert_true(fake.log[i++].armed);
    expect_write(i, FAKE_MSR_FIXED_CTR_CTRL, FIXED1_COUNT | FIXED1_PMI);
    assert_true(fake.log[i++].armed);
    expect_write(i, FAKE_MSR_GLOBAL_CTRL, BIT(33));
    assert_true(fake.log[i++].armed);
    assert_int_equal(fake.log_len, i);
    assert_true(pmu_arm_this_cpu()); /* armed already: nothing written */
    assert_int_equal(fake.log_len, i);

    run_periods(10);

    /* Armed, but the status says no overflow: a genuine NMI. */
    assert_false(fake_inject_nmi());

    from = fake.log_len;
    pmu_disarm_this_cpu();
    assert_false(pmu_armed_this_cpu());
    /* Disabled with the flag still up: the global enable first, then the field; then, the flag down, the LVT
     * entry masked (an NMI in between finds the flag down, and leaves the entry masked for the write to come). */
    i = from;
    expect_write(i, FAKE_MSR_GLOBAL_CTRL, 0);
    assert_true(fake.log[i++].armed);
    expect_write(i, FAKE_MSR_FIXED_CTR_CTRL, 0);
    assert_true(fake.log[i++].armed);
    expect_lvt(i, LVT_DELIVERY_NMI | LVT_MASK_BIT);
    assert_false(fake.log[i++].armed);
    assert_int_equal(fake.log_len, i);

    unsigned mine = fake.nmis_mine;
    fake_run(10 * MS);
    assert_int_equal(fake.nmis_mine, mine); /* stopped for real */
    assert_false(fake_inject_nmi());
    pmu_disarm_this_cpu(); /* not armed: nothing to do */
    assert_int_equal(fake.log_len, i + 1 /* the genuine NMI */);
}

static void intel_late_overflow_after_disarm(void **state)
{
    (void)state;
    boot_armed(fake_model_intel_v2);

    /* The counter overflows inside the disarm, and its NMI arrives only after the flag is down: the status
     * bit still shows it, so it is the counter's. */
    uint64_t left = BIT(40) - fake.cpu[0].fixed_ctr[1];
    fake_run(left - 50);
    assert_int_equal(fake.nmis_mine, 1); /* the probe's */
    fake.hold_nmis = true;
    pmu_disarm_this_cpu();
    assert_false(pmu_armed_this_cpu());
    assert_true(fake.cpu[0].nmi_pending);
    fake_release_nmis();
    assert_int_equal(fake.nmis_mine, 2);
    assert_true(fake.last_nmi_mine);
    assert_int_equal(fake.cpu[0].global_status & BIT(33), 0); /* acknowledged */

    /* Minutes later a genuine NMI is genuine. */
    fake_advance(120 * 1000 * MS);
    assert_false(fake_inject_nmi());
}

static void intel_lost_pmi_then_genuine_nmi(void **state)
{
    (void)state;
    boot_armed(fake_model_intel_v2);
    fake_run(BIT(40) - fake.cpu[0].fixed_ctr[1] - 50);
    fake.hold_nmis = true;
    pmu_disarm_this_cpu();
    /* The overflow's NMI never comes; its status bit stays set. A genuine NMI long after the window is not
     * mistaken for it. */
    fake.cpu[0].nmi_pending = false;
    fake.hold_nmis = false;
    assert_true(fake.cpu[0].global_status & BIT(33));
    fake_advance(120 * 1000 * MS);
    assert_false(fake_inject_nmi());
}

static void intel_overflow_read_from_status_exactly(void **state)
{
    (void)state;
    /* On Intel the global status decides, not the counter's value: a counter that reads positive with no
     * status bit is no overflow, and the status bit is one whatever the counter reads. */
    boot_armed(fake_model_intel_v2);
    fake.cpu[0].fixed_ctr[1] = 5;
    assert_false(fake_inject_nmi());
    fake.cpu[0].fixed_ctr[1] = (0 - MS / 2) & MASK(40);
    fake.cpu[0].global_status |= BIT(33);
    /* The status bit alone, the entry unmasked: the PMI has not been delivered (its delivery masks the entry),
     * so this NMI is another source's. */
    assert_false(fake_inject_nmi());
    assert_true(fake.cpu[0].global_status & BIT(33));
    fake.cpu[0].lvtpc |= LVT_MASK_BIT; /* as the PMI's delivery leaves it */
    assert_true(fake_inject_nmi());
    assert_int_equal(fake.cpu[0].global_status & BIT(33), 0);
    assert_int_equal(fake.cpu[0].lvtpc & LVT_MASK_BIT, 0); /* unmasked again for the next */
    pmu_disarm_this_cpu();
}

/* ---- Intel v4 with the freeze bit set by firmware ------------------------------------------------------ */

static void intel_v4_freeze_cleared_first(void **state)
{
    (void)state;
    boot(fake_model_intel_v4_freeze, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    int freeze = fake_find_bits(0, FAKE_MSR_DEBUGCTL, BIT(12), false);
    int enable = fake_find_bits(0, FAKE_MSR_GLOBAL_CTRL, BIT(33), true);
    assert_true(freeze >= 0 && enable >= 0);
    assert_true(freeze < enable);
    assert_int_equal(fake_find(0, FAKE_WRMSR, FAKE_MSR_DEBUGCTL), freeze); /* the first DEBUGCTL write */
    assert_int_equal(fake.cpu[0].debugctl & BIT(12), 0);

    /* CPU 1's DEBUGCTL is its own: cleared by its own arm, before its own enable. */
    fake_cpu_index = 1;
    unsigned from = fake.log_len;
    assert_true(fake.cpu[1].debugctl & BIT(12));
    assert_true(pmu_arm_this_cpu());
    freeze = fake_find_bits(from, FAKE_MSR_DEBUGCTL, BIT(12), false);
    enable = fake_find_bits(from, FAKE_MSR_GLOBAL_CTRL, BIT(33), true);
    assert_true(freeze >= 0 && freeze < enable);
    assert_int_equal(fake.log[freeze].cpu, 1);
    run_periods(10);
    assert_int_equal(fake.freezes, 0);
    pmu_disarm_this_cpu();
}

static void intel_freeze_would_stop_the_counter(void **state)
{
    (void)state;
    /* The model's freeze is real: with the bit set again behind the backend's back, the first PMI stops the
     * counter and no second one comes -- which is what clearing it first prevents. */
    boot_armed(fake_model_intel_v4_freeze);
    fake.cpu[0].debugctl |= BIT(12);
    unsigned mine = fake.nmis_mine;
    fake_run(10 * MS + MS / 2);
    assert_int_equal(fake.nmis_mine - mine, 1);
    assert_int_equal(fake.freezes, 1);
    pmu_disarm_this_cpu();
}

/* ---- Intel v5 fixed-counter bitmap, hybrid ------------------------------------------------------------- */

static void intel_v5_without_fixed1_refused(void **state)
{
    (void)state;
    boot(fake_model_intel_v5_no_fixed1, NULL);
    assert_int_equal(pmu_verdict(), PMU_NOT_CLAIMED);
    assert_int_equal(pmu_probe(), PMU_NOT_CLAIMED);
    assert_string_equal(pmu_verdict_reason(),
                        "no usable PMU: CPUID leaf 0xA lists no fixed counter 1 (unhalted core cycles)");
    assert_false(pmu_arm_this_cpu());
    assert_false(fake_inject_nmi());
    describe_now();
    expect_described("perfmon:    fixed-counter bitmap 0x5\n");
    expect_described("perfmon:    fixed counter 1 (unhalted core cycles): no\n");
    expect_described("hypervisor: KVMKVMKVM\n");
    expect_described("profile:    tick only\n");
    assert_int_equal(fake.msr_accesses, 0); /* refused on CPUID alone: no MSR touched */
}

static void intel_v5_bitmap_offers_fixed1(void **state)
{
    (void)state;
    /* One contiguous fixed counter, but the bitmap names counter 1: it is there. */
    fake_model_intel_v5_no_fixed1();
    fake_cpuid_set(0xA, 0, FAKE_ANY_CPU, 0x07300805u, 0, 0x2, 1u | 48u << 5);
    pmu_reset_for_tests();
    pmu_select(NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
    run_periods(3);
    pmu_disarm_this_cpu();
}

static void intel_hybrid_both_core_types(void **state)
{
    (void)state;
    /* Chosen and probed on an Atom; armed on the Core and an Atom. */
    fake_model_intel_hybrid();
    fake_cpu_index = 1;
    pmu_reset_for_tests();
    pmu_select(NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_string_equal(pmu_source_name(), "pmu/nmi intel fixed-ctr1");
    describe_now();
    expect_described("hybrid:     yes; this CPU is Atom (efficiency)\n");
    expect_described("perfmon:    arch perfmon v5, 6 general counters of 48 bits, 3 fixed of 48 bits\n");
    expect_described("family:     0x6 model 0x97 stepping 2\n");
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        fake_cpu_index = cpu;
        assert_true(pmu_arm_this_cpu());
        run_periods(5);
    }
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        fake_cpu_index = cpu;
        pmu_disarm_this_cpu();
        assert_false(pmu_armed_this_cpu());
    }
}

static void intel_v2_describe(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, NULL);
    describe_now();
    assert_string_equal(described,
                        "vendor:     GenuineIntel\n"
                        "model name: Intel(R) Core(TM)2 Duo CPU     E8400  @ 3.00GHz\n"
                        "family:     0x6 model 0x17 stepping 10\n"
                        "hypervisor: none\n"
                        "apic:       xAPIC (no x2APIC in CPUID)\n"
                        "perfmon:    arch perfmon v2, 2 general counters of 40 bits, 3 fixed of 40 bits\n"
                        "perfmon:    fixed counter 1 (unhalted core cycles): yes\n"
                        "probe:      counts: the counter counts and its overflow arrives as an NMI\n"
                        "profile:    pmu/nmi intel fixed-ctr1\n"
                        "nmi claim:  overflow status and the LVT mask set by the PMI's delivery (a genuine NMI "
                        "while an overflow is on its way is told apart)\n"
                        "armed now:  none\n"
                        "lvt accesses: 2 (LAPIC 0x340) by the counter's NMIs on 1 cpus\n");
}

/* The NMI claim's LVT accesses (an exit each under a hypervisor) counted per CPU, every one of them: the probe's
 * NMI and each armed period's read the mask and write the entry back; the count is the fake's own count of LVT
 * accesses made inside an NMI. lscpu names the register of the APIC's mode. */
static void intel_nmi_lvt_accesses_counted(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, NULL);
    fake.x2apic = true;
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
    run_periods(10);
    pmu_disarm_this_cpu();
    struct pmu_cpu_view v;
    assert_true(pmu_cpu_view(fake_cpu_index, &v));
    assert_int_equal(v.nmi_lvt_accesses, fake.cpu[fake_cpu_index].lvt_in_nmi);
    assert_int_equal(v.nmi_lvt_accesses, 2 * 11); /* the probe's NMI and ten periods' */
    assert_true(fake.lvt_reads + fake.lvt_writes > v.nmi_lvt_accesses); /* arming and disarming are not counted */
    describe_now();
    expect_described("apic:       x2APIC\n");
    expect_described("lvt accesses: 22 (x2APIC MSR 0x834) by the counter's NMIs on 1 cpus\n");
    assert_false(pmu_cpu_view(MAX_CPUS, &v));
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               intel_v2_probe_counts, intel_v2_arm_run_disarm, intel_late_overflow_after_disarm,
               intel_lost_pmi_then_genuine_nmi, intel_overflow_read_from_status_exactly, intel_v4_freeze_cleared_first,
               intel_freeze_would_stop_the_counter, intel_v5_without_fixed1_refused, intel_v5_bitmap_offers_fixed1,
               intel_hybrid_both_core_types, intel_v2_describe, intel_nmi_lvt_accesses_counted)
