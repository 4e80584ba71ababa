/* tests/unit/test_fake_cpu.c: the fake CPU's models (tests/unit/fake_cpu.c, fake_cpu_models.c) held to the
 * manuals, since they are the only proof the PMU code has: on each model, a write that sets a reserved bit, an
 * access to an MSR the part does not have and a write to a read-only status register raise #GP; an overflow
 * stays in the status until the clear register clears it (and nothing else clears it); the legacy AMD counters
 * alias the core ones; an overflow becomes an NMI only through an unmasked LVT entry in NMI mode, and a bad
 * LVT write is counted. A rule loosened in the model fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "hal/pmu.h"
#include "unit_main.h"

#define BIT(n) (1ull << (n))

static int setup(void **state)
{
    (void)state;
    fake_reset();
    pmu_reset_for_tests();
    fake_cpu_index = 0;
    return 0;
}

static void ok_write(uint32_t msr, uint64_t v)
{
    if (!wrmsr_safe(msr, v))
        fail_msg("wrmsr 0x%x = 0x%llx raised #GP", msr, (unsigned long long)v);
}

static void gp_write(uint32_t msr, uint64_t v)
{
    if (wrmsr_safe(msr, v))
        fail_msg("wrmsr 0x%x = 0x%llx was accepted", msr, (unsigned long long)v);
}

static uint64_t ok_read(uint32_t msr)
{
    uint64_t v = 0;
    if (!rdmsr_safe(msr, &v))
        fail_msg("rdmsr 0x%x raised #GP", msr);
    return v;
}

static void gp_read(uint32_t msr)
{
    uint64_t v;
    if (rdmsr_safe(msr, &v))
        fail_msg("rdmsr 0x%x was accepted", msr);
}

#define FIXED_CTR_CTRL FAKE_MSR_FIXED_CTR_CTRL
#define GLOBAL_STATUS FAKE_MSR_GLOBAL_STATUS
#define GLOBAL_CTRL FAKE_MSR_GLOBAL_CTRL
#define OVF_CTRL FAKE_MSR_GLOBAL_OVF_CTRL
#define EVTSEL0 0x186u
#define PMC0 0xC1u

/* ---- Intel ---------------------------------------------------------------------------------------------- */

static void intel_v2_reserved_bits_and_missing_msrs(void **state)
{
    (void)state;
    fake_model_intel_v2(); /* 2 general counters, 3 fixed, 40 bits */
    ok_write(GLOBAL_CTRL, BIT(0) | BIT(1) | BIT(32) | BIT(33) | BIT(34));
    gp_write(GLOBAL_CTRL, BIT(2));  /* no third general counter */
    gp_write(GLOBAL_CTRL, BIT(35)); /* no fourth fixed counter */
    gp_write(GLOBAL_STATUS, 0);     /* read-only, even a write of 0 */
    ok_read(GLOBAL_STATUS);
    ok_write(FIXED_CTR_CTRL, 0xBBB);
    gp_write(FIXED_CTR_CTRL, 0x4 << 4);  /* AnyThread: not before v3 */
    gp_write(FIXED_CTR_CTRL, 0x1 << 12); /* fixed counter 3's field */
    ok_write(OVF_CTRL, BIT(33) | BIT(62) | BIT(63));
    gp_write(OVF_CTRL, BIT(59)); /* CTR_Frz: v4 */
    gp_write(OVF_CTRL, BIT(2));
    gp_read(FAKE_MSR_GLOBAL_STATUS_SET); /* v4 */
    gp_write(FAKE_MSR_GLOBAL_STATUS_SET, BIT(33));
    ok_write(EVTSEL0, 0x43003C);
    gp_write(EVTSEL0, BIT(21)); /* AnyThread */
    gp_write(EVTSEL0, BIT(32));
    gp_read(EVTSEL0 + 2);
    gp_read(PMC0 + 2);
    ok_write(FAKE_MSR_FIXED_CTR1, BIT(40) - 1);
    gp_write(FAKE_MSR_FIXED_CTR1, BIT(40)); /* above the 40 bits CPUID gives */
    gp_read(FAKE_MSR_FIXED_CTR0 + 3);
    ok_write(FAKE_MSR_DEBUGCTL, BIT(12));
    gp_write(FAKE_MSR_DEBUGCTL, BIT(2)); /* 5:2 reserved */
    gp_write(FAKE_MSR_DEBUGCTL, BIT(16));
    gp_write(FAKE_MSR_DEBUGCTL, BIT(14)); /* FREEZE_WHILE_SMM: not on this part */
    gp_read(FAKE_MSR_AMD_LEGACY_FIRST);  /* AMD's */
    gp_read(FAKE_MSR_AMD_CTL0);
    gp_read(0x4C1); /* full-width counter writes: not offered */
}

static void intel_v2_legacy_pmc_write_sign_extends(void **state)
{
    (void)state;
    fake_model_intel_v2();
    ok_write(PMC0, 0xFFFFFFFF80000000ull);
    assert_int_equal(ok_read(PMC0), 0xFF80000000ull); /* bit 31 copied up to the 40-bit width */
    ok_write(PMC0, 0x123456789ull);
    assert_int_equal(ok_read(PMC0), 0x23456789ull);
}

/* Fixed counter 1 loaded one count below overflow, counting with its PMI, the LVT entry set to lvt (directly:
 * a write through pmu_hw takes time, and the counter would overflow inside it). */
static void intel_overflow_fixed1(uint32_t lvt)
{
    fake.cpu[0].lvtpc = lvt;
    ok_write(FAKE_MSR_FIXED_CTR1, BIT(40) - 1);
    ok_write(FIXED_CTR_CTRL, 0xB0);
    ok_write(GLOBAL_CTRL, BIT(33));
}

static void intel_status_latched_until_ovf_ctrl(void **state)
{
    (void)state;
    fake_model_intel_v2();
    intel_overflow_fixed1(LVT_DELIVERY_NMI);
    fake_advance(1000);
    assert_true(ok_read(GLOBAL_STATUS) & BIT(33));
    /* Nothing but OVF_CTRL clears it: not reloading, not disabling, not the NMI being taken. */
    ok_write(FAKE_MSR_FIXED_CTR1, 5);
    ok_write(GLOBAL_CTRL, 0);
    ok_write(FIXED_CTR_CTRL, 0);
    fake_advance(1000);
    assert_true(ok_read(GLOBAL_STATUS) & BIT(33));
    ok_write(OVF_CTRL, BIT(32)); /* another counter's bit */
    assert_true(ok_read(GLOBAL_STATUS) & BIT(33));
    ok_write(OVF_CTRL, BIT(33));
    assert_false(ok_read(GLOBAL_STATUS) & BIT(33));
    assert_int_equal(ok_read(OVF_CTRL), 0);
}

static void intel_v4_status_reset_and_set(void **state)
{
    (void)state;
    fake_model_intel_v4_freeze();
    ok_write(FAKE_MSR_GLOBAL_STATUS_SET, BIT(33) | BIT(0));
    assert_int_equal(ok_read(GLOBAL_STATUS), BIT(33) | BIT(0));
    gp_write(FAKE_MSR_GLOBAL_STATUS_SET, BIT(63)); /* CondChgd: the hardware's alone */
    gp_write(FAKE_MSR_GLOBAL_STATUS_SET, BIT(4));  /* four general counters */
    ok_write(OVF_CTRL, BIT(0));
    assert_int_equal(ok_read(GLOBAL_STATUS), BIT(33));
    /* CTR_Frz: set freezes the counters, STATUS_RESET unfreezes them. */
    ok_write(FAKE_MSR_GLOBAL_STATUS_SET, BIT(59));
    assert_true(fake.cpu[0].frozen);
    ok_write(OVF_CTRL, BIT(59) | BIT(33));
    assert_false(fake.cpu[0].frozen);
    assert_int_equal(ok_read(GLOBAL_STATUS), 0);
    ok_write(FIXED_CTR_CTRL, 0x4 << 4); /* AnyThread is defined on v4 */
    ok_write(EVTSEL0, BIT(21));
    ok_write(FAKE_MSR_DEBUGCTL, BIT(12) | BIT(14));
    gp_read(FAKE_MSR_FIXED_CTR0 + 3);
}

static void intel_v5_missing_fixed1(void **state)
{
    (void)state;
    fake_model_intel_v5_no_fixed1(); /* fixed counters 0 and 2 */
    gp_read(FAKE_MSR_FIXED_CTR1);
    gp_write(FAKE_MSR_FIXED_CTR1, 0);
    ok_write(FAKE_MSR_FIXED_CTR0 + 2, 1);
    gp_write(GLOBAL_CTRL, BIT(33));
    ok_write(GLOBAL_CTRL, BIT(32) | BIT(34) | 0xFF);
    gp_write(FIXED_CTR_CTRL, 0x1 << 4);
    ok_write(FIXED_CTR_CTRL, 0xB0B);
    gp_write(OVF_CTRL, BIT(33));
}

static void intel_hybrid_counters_per_cpu(void **state)
{
    (void)state;
    fake_model_intel_hybrid(); /* CPU 0 a Core with 8 general counters, the others Atoms with 6 */
    fake_cpu_index = 0;
    ok_write(EVTSEL0 + 7, 0);
    ok_write(GLOBAL_CTRL, BIT(7) | BIT(33));
    gp_write(FIXED_CTR_CTRL, 0x4 << 4); /* EDX[15]: AnyThread deprecated */
    fake_cpu_index = 1;
    gp_write(EVTSEL0 + 7, 0);
    gp_write(GLOBAL_CTRL, BIT(7));
    ok_write(GLOBAL_CTRL, BIT(5) | BIT(33));
    fake_cpu_index = 0;
}

static void intel_v1_has_no_fixed_or_global_registers(void **state)
{
    (void)state;
    fake_model_intel_v1();
    ok_write(EVTSEL0, 0x43003C);
    gp_read(GLOBAL_CTRL);
    gp_read(GLOBAL_STATUS);
    gp_write(OVF_CTRL, 0);
    gp_read(FIXED_CTR_CTRL);
    gp_read(FAKE_MSR_FIXED_CTR1);
}

/* ---- AMD ------------------------------------------------------------------------------------------------ */

static void amd_zen2_reserved_bits_and_missing_msrs(void **state)
{
    (void)state;
    fake_model_amd_zen2();
    ok_write(FAKE_MSR_AMD_CTL0, 0x76 | BIT(16) | BIT(17) | BIT(20) | BIT(22) | BIT(40));
    gp_write(FAKE_MSR_AMD_CTL0, BIT(19));
    gp_write(FAKE_MSR_AMD_CTL0, BIT(21));
    gp_write(FAKE_MSR_AMD_CTL0, BIT(36));
    gp_write(FAKE_MSR_AMD_CTL0, BIT(42));
    ok_write(FAKE_MSR_AMD_CTR0, BIT(48) - 1);
    gp_write(FAKE_MSR_AMD_CTR0, BIT(48));
    ok_read(FAKE_MSR_AMD_CTL0 + 10); /* counter 5 */
    gp_read(FAKE_MSR_AMD_CTL0 + 12); /* no counter 6 */
    gp_read(FAKE_MSR_AMD_GLOBAL_STATUS); /* no PerfMonV2 */
    gp_write(FAKE_MSR_AMD_GLOBAL_CTL, 1);
    gp_write(FAKE_MSR_AMD_GLOBAL_STATUS_CLR, 1);
    gp_read(GLOBAL_CTRL); /* Intel's */
    gp_read(FAKE_MSR_DEBUGCTL);
}

static void amd_legacy_counters_alias_the_core_ones(void **state)
{
    (void)state;
    fake_model_amd_zen2();
    ok_write(FAKE_MSR_AMD_LEGACY_FIRST + 1, 0x76);   /* PerfEvtSel1 */
    assert_int_equal(ok_read(FAKE_MSR_AMD_CTL0 + 2), 0x76);
    ok_write(FAKE_MSR_AMD_CTR0 + 6, 1234);           /* PERF_CTR3 */
    assert_int_equal(ok_read(FAKE_MSR_AMD_LEGACY_FIRST + 7), 1234);
    gp_write(FAKE_MSR_AMD_LEGACY_FIRST, BIT(21));    /* the same reserved bits */
}

static void amd_zen4_global_registers(void **state)
{
    (void)state;
    fake_model_amd_zen4(); /* 6 counters */
    ok_write(FAKE_MSR_AMD_GLOBAL_CTL, 0x3F);
    gp_write(FAKE_MSR_AMD_GLOBAL_CTL, BIT(6));
    gp_write(FAKE_MSR_AMD_GLOBAL_STATUS, 0); /* read-only */
    gp_write(FAKE_MSR_AMD_GLOBAL_STATUS_CLR, BIT(6));
    ok_write(FAKE_MSR_AMD_GLOBAL_STATUS_SET, BIT(2));
    assert_int_equal(ok_read(FAKE_MSR_AMD_GLOBAL_STATUS), BIT(2));
    ok_write(FAKE_MSR_AMD_GLOBAL_STATUS_CLR, BIT(2));
    assert_int_equal(ok_read(FAKE_MSR_AMD_GLOBAL_STATUS), 0);
    gp_read(0xC0000304u);
}

static void amd_zen4_status_latched_until_clr(void **state)
{
    (void)state;
    fake_model_amd_zen4();
    fake.cpu[0].lvtpc = LVT_DELIVERY_NMI;
    ok_write(FAKE_MSR_AMD_CTR0, BIT(48) - 1);
    ok_write(FAKE_MSR_AMD_CTL0, 0x76 | BIT(17) | BIT(20) | BIT(22));
    ok_write(FAKE_MSR_AMD_GLOBAL_CTL, 1);
    fake_advance(1000);
    assert_true(ok_read(FAKE_MSR_AMD_GLOBAL_STATUS) & 1);
    ok_write(FAKE_MSR_AMD_CTR0, 7);
    ok_write(FAKE_MSR_AMD_CTL0, 0);
    ok_write(FAKE_MSR_AMD_GLOBAL_CTL, 0);
    assert_true(ok_read(FAKE_MSR_AMD_GLOBAL_STATUS) & 1);
    ok_write(FAKE_MSR_AMD_GLOBAL_STATUS_CLR, 1);
    assert_false(ok_read(FAKE_MSR_AMD_GLOBAL_STATUS) & 1);
}

static void amd_legacy_only_faults_everywhere(void **state)
{
    (void)state;
    fake_model_amd_legacy_only();
    gp_read(FAKE_MSR_AMD_LEGACY_FIRST);
    gp_write(FAKE_MSR_AMD_LEGACY_FIRST + 4, 0);
    gp_read(FAKE_MSR_AMD_CTL0);
    gp_read(FAKE_MSR_AMD_GLOBAL_STATUS);
}

/* ---- the LVT entry and the NMI -------------------------------------------------------------------------- */

static void nmi_only_through_an_unmasked_nmi_entry(void **state)
{
    (void)state;
    fake_model_intel_v2();
    fake.nmi_handler = 0;
    intel_overflow_fixed1(LVT_DELIVERY_NMI | LVT_MASK_BIT); /* masked */
    fake_advance(1000);
    assert_int_equal(fake.pmis_lost, 1);
    assert_int_equal(fake.nmis_mine + fake.nmis_genuine, 0);
    /* Unmasking later does not deliver the lost PMI; the status still shows the overflow. */
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI);
    assert_int_equal(fake.nmis_mine + fake.nmis_genuine, 0);
    assert_true(ok_read(GLOBAL_STATUS) & BIT(33));

    fake.cpu[0].lvtpc = 0x40; /* Fixed mode, vector 0x40: an interrupt, not an NMI */
    ok_write(FAKE_MSR_FIXED_CTR1, BIT(40) - 1);
    fake_advance(1000);
    assert_int_equal(fake.pmis_not_nmi, 1);
    assert_int_equal(fake.nmis_mine + fake.nmis_genuine, 0);

    fake.cpu[0].lvtpc = LVT_DELIVERY_NMI;
    ok_write(FAKE_MSR_FIXED_CTR1, BIT(40) - 1);
    fake_advance(1000);
    assert_int_equal(fake.nmis_mine + fake.nmis_genuine, 1);
    assert_true(fake.cpu[0].lvtpc & LVT_MASK_BIT); /* Intel masks the entry as it delivers */
    assert_int_equal(fake.lvt_bad_writes, 0);
}

static void bad_lvt_writes_are_counted(void **state)
{
    (void)state;
    fake_model_intel_v2();
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI);
    pmu_hw_lvtpc_write(LVT_MASK_BIT);            /* the reset value: fine */
    pmu_hw_lvtpc_write(0x200 | LVT_MASK_BIT);    /* SMI: supported */
    assert_int_equal(fake.lvt_bad_writes, 0);
    pmu_hw_lvtpc_write(0x500);                   /* INIT: not for this entry */
    pmu_hw_lvtpc_write(0x700);                   /* ExtINT: not for this entry */
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI | BIT(17)); /* reserved (a timer-mode bit) */
    pmu_hw_lvtpc_write(0x05);                    /* Fixed, unmasked, vector 5: illegal */
    assert_int_equal(fake.lvt_bad_writes, 4);
    pmu_hw_lvtpc_write(LVT_DELIVERY_NMI | BIT(12)); /* delivery status: read-only, not stored */
    assert_int_equal(pmu_hw_lvtpc_read(), LVT_DELIVERY_NMI);
}

static void swallowing_hypervisor_accepts_everything(void **state)
{
    (void)state;
    fake_model_hypervisor_swallows(); /* kept lax on purpose: that is what it models */
    ok_write(GLOBAL_STATUS, ~0ull);
    ok_write(0x12345678u, 1);
    assert_int_equal(ok_read(GLOBAL_CTRL), 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               intel_v2_reserved_bits_and_missing_msrs, intel_v2_legacy_pmc_write_sign_extends,
               intel_status_latched_until_ovf_ctrl, intel_v4_status_reset_and_set, intel_v5_missing_fixed1,
               intel_hybrid_counters_per_cpu, intel_v1_has_no_fixed_or_global_registers,
               amd_zen2_reserved_bits_and_missing_msrs, amd_legacy_counters_alias_the_core_ones,
               amd_zen4_global_registers, amd_zen4_status_latched_until_clr, amd_legacy_only_faults_everywhere,
               nmi_only_through_an_unmasked_nmi_entry, bad_lvt_writes_are_counted,
               swallowing_hypervisor_accepts_everything)
