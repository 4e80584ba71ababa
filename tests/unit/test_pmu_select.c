/* tests/unit/test_pmu_select.c: how arch/x86_64/pmu.c chooses a sample source when the PMU cannot be trusted
 * or is told what to do -- a hypervisor that swallows the writes, QEMU -cpu max's out-of-range leaf, a counter
 * that never interrupts, no PMU at all, pmu=off, bad pmu= values and the claim-* modes -- and the cached verdict,
 * the period (its floor, a millisecond of cycles), faults while probing or arming, and genuine NMIs with nothing
 * selected. Every test ends with pmu_fixture.c's invariants. */
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

/* Boots on model and probes, which must give want: the TSC ticks the probe spent. */
static uint64_t probe_spent(void (*model)(void), enum pmu_verdict want)
{
    boot(model, NULL);
    uint64_t t0 = fake.tsc;
    assert_int_equal(pmu_probe(), want);
    return fake.tsc - t0;
}

/* ---- a hypervisor that claims a PMU and swallows the writes --------------------------------------------- */

static void hypervisor_swallows_does_not_count(void **state)
{
    (void)state;
    uint64_t spent = probe_spent(fake_model_hypervisor_swallows, PMU_DOES_NOT_COUNT);
    /* The spin is bounded by the TSC at about 10 us -- all of it spent, since nothing moves. */
    assert_true(spent >= MS / 100);
    assert_true(spent < MS / 100 + 2000);
    assert_string_equal(pmu_verdict_reason(), "the counter does not count (CPUID claims a PMU; writes are swallowed)");
    assert_null(pmu_source_name());
    /* Left disabled: the last writes turn the global enable and the field off. */
    expect_write(fake.log_len - 2, FAKE_MSR_GLOBAL_CTRL, 0);
    expect_write(fake.log_len - 1, FAKE_MSR_FIXED_CTR_CTRL, 0);
    assert_int_equal(fake_find(0, FAKE_LVT, 0), -1); /* never got as far as the interrupt */
    unsigned n = fake.log_len;
    assert_false(pmu_arm_this_cpu());
    assert_int_equal(fake.log_len, n);
    describe_now();
    expect_described("hypervisor: KVMKVMKVM\n");
    expect_described("probe:      does not count: the counter does not count");
    expect_described("profile:    tick only\n");
}

/* ---- QEMU -cpu max: no PMU, and a leaf 0x80000022 that answers above the maximum ------------------------ */

static void qemu_amd_max_out_of_range_leaf(void **state)
{
    (void)state;
    boot(fake_model_qemu_amd_max, NULL);
    /* The trap is in the model: the out-of-range leaf says 0x21f, bit 0 set. */
    uint32_t r[4];
    pmu_hw_cpuid(0x80000022u, 0, r);
    assert_int_equal(r[0], 0x21F);
    assert_int_equal(pmu_probe(), PMU_NOT_CLAIMED);
    assert_int_equal(fake.msr_accesses, 0);
    describe_now();
    expect_described("vendor:     AuthenticAMD\n");
    expect_described("model name: QEMU TCG CPU version 2.5+\n");
    expect_described("hypervisor: TCGTCGTCGTCG\n");
    expect_described("perfmon:    PerfMonV2 not reported (maximum extended leaf 0x8000000a < 0x80000022)\n");
    expect_described("probe:      not probed (no usable PMU: CPUID 0x80000001 ECX bit 23 (PerfCtrExtCore)");
    expect_described("profile:    tick only\n");
}

static void qemu_amd_max_claim_amd_does_not_count(void **state)
{
    (void)state;
    boot(fake_model_qemu_amd_max, "claim-amd");
    assert_int_equal(pmu_probe(), PMU_DOES_NOT_COUNT);
    assert_string_equal(pmu_verdict_reason(),
                        "the counter does not count (pmu=claim-amd made CPUID claim a PMU; writes are swallowed)");
    /* The junk PerfMonV2 was not believed: the global registers were never used. */
    assert_int_equal(fake_writes_in(0xC0000300u, 0xC0000303u), 0);
    assert_true(fake_writes_in(FAKE_MSR_AMD_CTL0, FAKE_MSR_AMD_CTR0) > 0);
    describe_now();
    expect_described("perfmon:    PerfMonV2 not reported");
    expect_described("pmu mode:   claim-amd (CPUID's PMU leaves answered as if the CPU claimed one)\n");
    assert_string_equal(fake_log_text, "pmu: amd backend, pmu/nmi amd pmc0 ev0x76, claimed under "
                                       "pmu=claim-amd; probed when first used\n");
}

static void qemu_amd_max_claim_intel(void **state)
{
    (void)state;
    /* claim-intel picks the Intel backend whatever the vendor string says. */
    boot(fake_model_qemu_amd_max, "claim-intel");
    assert_int_equal(pmu_probe(), PMU_DOES_NOT_COUNT);
    assert_true(fake_writes_in(FAKE_MSR_GLOBAL_CTRL, FAKE_MSR_GLOBAL_CTRL) > 0);
    assert_int_equal(fake_writes_in(0xC0000000u, 0xC001FFFFu), 0);
}

/* ---- a counter that counts but never interrupts ------------------------------------------------------- */

static uint64_t fake_tsc(void) { return fake.tsc; }

static void counts_but_never_interrupts(void **state)
{
    (void)state;
    fake_irqs_off_clock = fake_tsc;
    fake_irqs_off_longest = 0;
    uint64_t spent = probe_spent(fake_model_no_interrupt, PMU_NO_INTERRUPT);
    fake_irqs_off_clock = NULL;
    assert_true(spent >= 10 * MS);       /* waited the whole 10 ms for the NMI */
    assert_true(spent < 10 * MS + MS / 10);
    /* ... with interrupts on: off only for the count's spin (which ends at once here: the counter moves) and
     * the MSR accesses around it, within the spec's bound of about ten microseconds (the whole wait was off) */
    assert_true(fake_irqs_off_longest > 0);
    assert_true(fake_irqs_off_longest < MS / 100);
    assert_string_equal(pmu_verdict_reason(), "the counter counts, but its overflow raised no NMI within 10 ms");
    assert_false(pmu_usable());
    assert_false(pmu_arm_this_cpu());
    /* Disabled afterwards, LVT entry as it was; the unclaimed overflow does not make the next NMI "ours". */
    assert_int_equal(fake.cpu[0].global_ctrl & BIT(33), 0);
    assert_int_equal(fake.cpu[0].fixed_ctrl & 0xF0, 0);
    assert_int_equal(fake.cpu[0].lvtpc, LVT_MASK_BIT);
    assert_true(fake.cpu[0].global_status & BIT(33));
    assert_false(fake_inject_nmi());
    describe_now();
    expect_described("probe:      no interrupt: ");
}

/* ---- no PMU (QEMU -cpu Skylake-Client) --------------------------------------------------------------- */

static void no_pmu_auto(void **state)
{
    (void)state;
    boot(fake_model_no_pmu, NULL);
    assert_int_equal(pmu_verdict(), PMU_NOT_CLAIMED);
    assert_string_equal(pmu_verdict_reason(), "no PMU: CPUID leaf 0xA reports version 0");
    assert_string_equal(fake_log_text, "pmu: no PMU: CPUID leaf 0xA reports version 0: profile samples on the tick\n");
    assert_int_equal(pmu_probe(), PMU_NOT_CLAIMED);
    assert_false(pmu_arm_this_cpu());
    pmu_disarm_this_cpu();
    assert_false(fake_inject_nmi());
    describe_now();
    expect_described("perfmon:    none (CPUID leaf 0xA: version 0)\n");
    assert_int_equal(fake.msr_accesses, 0);
}

static void no_pmu_claim_intel_does_not_count(void **state)
{
    (void)state;
    boot(fake_model_no_pmu, "claim-intel");
    assert_int_equal(pmu_verdict(), PMU_NOT_PROBED);
    describe_now(); /* runs the probe, never a profile */
    assert_int_equal(pmu_verdict(), PMU_DOES_NOT_COUNT);
    expect_described("perfmon:    arch perfmon v2, 4 general counters of 48 bits, 3 fixed of 48 bits\n");
    expect_described("pmu mode:   claim-intel (CPUID's PMU leaves answered as if the CPU claimed one)\n");
    expect_described("probe:      does not count: the counter does not count (pmu=claim-intel made CPUID claim "
                     "a PMU; writes are swallowed)\n");
    expect_described("profile:    tick only\n");
    assert_false(pmu_arm_this_cpu());
    assert_int_equal(fake.nmis_mine + fake.nmis_genuine, 0);
}

/* ---- pmu=off, bad values, the cache, the period ----------------------------------------------------- */

static void pmu_off(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, "off");
    assert_int_equal(pmu_verdict(), PMU_DISABLED);
    assert_int_equal(pmu_probe(), PMU_DISABLED);
    assert_string_equal(pmu_verdict_reason(), "pmu=off on the kernel command line");
    assert_string_equal(fake_log_text, "pmu: off (pmu=off): profile samples on the tick\n");
    assert_false(pmu_arm_this_cpu());
    describe_now();
    expect_described("perfmon:    arch perfmon v2, 2 general counters of 40 bits, 3 fixed of 40 bits\n");
    expect_described("pmu mode:   off\n");
    expect_described("probe:      not probed (pmu=off on the kernel command line)\n");
    assert_int_equal(fake.msr_accesses, 0);
}

static void pmu_bad_value_means_auto(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, "fast");
    assert_int_equal(fake_log_lines, 2);
    assert_non_null(strstr(fake_log_text, "warning: pmu: unknown pmu=fast (auto, off, claim-intel or "
                                          "claim-amd): using auto\n"));
    assert_int_equal(pmu_probe(), PMU_COUNTS);
}

static void probe_runs_once_and_is_cached(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    unsigned accesses = fake.msr_accesses, logged = fake_log_lines;
    fake.counts = false; /* were it asked again, it would now say "does not count" */
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    fake_cpu_index = 1;
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_int_equal(fake.msr_accesses, accesses);
    pmu_select("off"); /* selection happens once */
    assert_int_equal(pmu_verdict(), PMU_COUNTS);
    assert_int_equal(fake_log_lines, logged);
    assert_int_equal(logged, 1); /* the choice, logged once */
}

static void period_has_a_floor(void **state)
{
    (void)state;
    fake_cycles_per_ms = 1000; /* a 1 MHz clock: a millisecond would be 1000 cycles */
    boot(fake_model_amd_zen2, NULL);
    assert_int_equal(pmu_period_cycles(), 0); /* not probed yet: no counter period to state */
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_int_equal(pmu_period_cycles(), 10000); /* what the counter is loaded with, below */
    unsigned from = fake.log_len;
    assert_true(pmu_arm_this_cpu());
    assert_true(fake_find(from, FAKE_WRMSR, FAKE_MSR_AMD_CTR0) >= 0);
    expect_write((unsigned)fake_find(from, FAKE_WRMSR, FAKE_MSR_AMD_CTR0), FAKE_MSR_AMD_CTR0,
                 (0 - 10000ull) & MASK(48));
    pmu_disarm_this_cpu();
}

/* The period the counter is armed with is a millisecond of cycles, and pmu_period_cycles() says so; a PMU that
 * does not count has no period. */
static void period_is_a_millisecond_and_stated(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_int_equal(pmu_period_cycles(), fake_cycles_per_ms);
    unsigned from = fake.log_len;
    assert_true(pmu_arm_this_cpu());
    assert_true(fake_find(from, FAKE_WRMSR, FAKE_MSR_FIXED_CTR1) >= 0);
    expect_write((unsigned)fake_find(from, FAKE_WRMSR, FAKE_MSR_FIXED_CTR1), FAKE_MSR_FIXED_CTR1,
                 (0 - fake_cycles_per_ms) & MASK(40));
    pmu_disarm_this_cpu();

    boot(fake_model_hypervisor_swallows, NULL);
    assert_int_equal(pmu_probe(), PMU_DOES_NOT_COUNT);
    assert_int_equal(pmu_period_cycles(), 0);
}

/* On model, with msr raising #GP, the selection and then the probe find a fault, and say so with reason. */
static void expect_probe_fault(void (*model)(void), uint32_t msr, const char *reason)
{
    model();
    fake.gp_msr = msr;
    pmu_reset_for_tests();
    pmu_select(NULL);
    assert_int_equal(pmu_probe(), PMU_FAULTED);
    assert_string_equal(pmu_verdict_reason(), reason);
}

static void probe_fault_on_debugctl(void **state)
{
    (void)state;
    expect_probe_fault(fake_model_intel_v4_freeze, FAKE_MSR_DEBUGCTL,
                       "MSR 0x1d9 raised #GP while probing (CPUID claims a PMU)");
    assert_false(pmu_arm_this_cpu());
}

static void probe_fault_mid_way_leaves_it_disabled(void **state)
{
    (void)state;
    /* The global enable refuses: #GP after the field was set. The clean-up still clears the field. */
    expect_probe_fault(fake_model_intel_v2, FAKE_MSR_GLOBAL_CTRL,
                       "MSR 0x38f raised #GP while probing (CPUID claims a PMU)");
    assert_int_equal(fake.cpu[0].fixed_ctrl, 0);
}

static void arm_fault_leaves_cpu_on_the_tick(void **state)
{
    (void)state;
    boot(fake_model_intel_v4_freeze, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    fake_cpu_index = 1;
    fake.gp_msr = FAKE_MSR_FIXED_CTR_CTRL;
    assert_false(pmu_arm_this_cpu());
    assert_false(pmu_armed_this_cpu());
    unsigned accesses = fake.msr_accesses;
    assert_false(pmu_arm_this_cpu()); /* not tried again */
    assert_int_equal(fake.msr_accesses, accesses);
    assert_int_equal(fake.cpu[1].global_ctrl & BIT(33), 0);
    assert_false(fake_inject_nmi());
    /* Other CPUs arm as usual. */
    fake.gp_msr = 0;
    fake_cpu_index = 0;
    assert_true(pmu_arm_this_cpu());
    run_periods(2);
    pmu_disarm_this_cpu();
}

static void genuine_nmi_with_nothing_selected(void **state)
{
    (void)state;
    /* An NMI before the PMU was ever chosen (or on a CPU index out of range) touches nothing. */
    fake_model_intel_v2();
    pmu_reset_for_tests();
    assert_false(fake_inject_nmi());
    fake_cpu_index = 1000;
    assert_false(pmu_nmi_is_mine());
    assert_int_equal(fake.msr_accesses, 0);
    fake_cpu_index = 0;
}

static void probe_without_select_selects_auto(void **state)
{
    (void)state;
    fake_model_amd_zen4();
    pmu_reset_for_tests();
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_int_equal(fake_log_lines, 1);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               hypervisor_swallows_does_not_count, qemu_amd_max_out_of_range_leaf,
               qemu_amd_max_claim_amd_does_not_count, qemu_amd_max_claim_intel, counts_but_never_interrupts,
               no_pmu_auto, no_pmu_claim_intel_does_not_count, pmu_off, pmu_bad_value_means_auto,
               probe_runs_once_and_is_cached, period_has_a_floor, period_is_a_millisecond_and_stated,
               probe_fault_on_debugctl, probe_fault_mid_way_leaves_it_disabled, arm_fault_leaves_cpu_on_the_tick,
               genuine_nmi_with_nothing_selected, probe_without_select_selects_auto)
