/* tests/unit/test_pmu_amd.c: the PMU sample source (arch/x86_64/pmu.c, pmu_amd.c) on the fake CPU's AMD
 * models -- Zen 2 (core extension, the sign bit), Zen 4 (PerfMonV2) and legacy counters only: the verdict, the
 * MSR writes in order, and which NMIs are the counter's, including an overflow in flight at disarm, a stale sign
 * bit, and a genuine NMI minutes later before Zen 4. Every test ends with pmu_fixture.c's invariants (the legacy
 * counters at 0xC0010000..7 never touched among them). */
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

/* A machine of model, probed (the counter counts) and armed, whose counter overflows 50 cycles after it starts
 * to disarm: the NMI held, the disarm done. */
static void overflow_while_disarming(void (*model)(void))
{
    boot_armed(model);
    fake_run(BIT(48) - fake.cpu[0].amd_ctr[0] - 50);
    fake.hold_nmis = true;
    pmu_disarm_this_cpu();
}

/* An armed counter, cycles into a period: a genuine NMI there is genuine; then the disarm. Returns where in the
 * fake's log the disarm's writes begin. */
static unsigned genuine_nmi_then_disarm(uint64_t cycles)
{
    fake_run(cycles);
    assert_false(fake_inject_nmi());
    unsigned from = fake.log_len;
    pmu_disarm_this_cpu();
    return from;
}

/* ---- AMD Zen 2: core extension, the sign bit ------------------------------------------------------------ */

static void amd_zen2_probe_and_arm(void **state)
{
    (void)state;
    const uint64_t m48 = MASK(48);
    boot(fake_model_amd_zen2, NULL);
    assert_string_equal(fake_log_text, "pmu: amd backend, pmu/nmi amd pmc0 ev0x76, claimed by CPUID; "
                                       "probed when first used\n");
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_string_equal(pmu_source_name(), "pmu/nmi amd pmc0 ev0x76");

    unsigned i = 0;
    expect_write(i++, FAKE_MSR_AMD_CTR0, 0);
    expect_write(i++, FAKE_MSR_AMD_CTL0, AMD_COUNT);
    expect_write(i++, FAKE_MSR_AMD_CTL0, 0);
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i++, FAKE_MSR_AMD_CTR0, (0 - 10000ull) & m48);
    expect_write(i++, FAKE_MSR_AMD_CTL0, AMD_COUNT | AMD_INT);
    expect_nmi(i++, true);
    expect_write(i++, FAKE_MSR_AMD_CTR0, (0 - MS) & m48);
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i++, FAKE_MSR_AMD_CTL0, 0);
    expect_lvt(i++, LVT_MASK_BIT);
    assert_int_equal(fake.log_len, i);
    assert_int_equal(fake_writes_in(0xC0000300u, 0xC0000303u), 0); /* no global registers before Zen 4 */

    unsigned from = fake.log_len;
    assert_true(pmu_arm_this_cpu());
    i = from;
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i, FAKE_MSR_AMD_CTR0, (0 - MS) & m48);
    assert_true(fake.log[i++].armed);
    expect_write(i, FAKE_MSR_AMD_CTL0, AMD_COUNT | AMD_INT); /* the enable, flag already up */
    assert_true(fake.log[i++].armed);
    assert_int_equal(fake.log_len, i);

    run_periods(10);
    /* Mid-period the sign bit is still set: a genuine NMI while armed is genuine. */
    from = genuine_nmi_then_disarm(MS / 3);
    expect_write(from, FAKE_MSR_AMD_CTL0, 0);
    assert_true(fake.log[from].armed);
    assert_false(pmu_armed_this_cpu());
}

static void amd_zen2_late_overflow_then_genuine_minutes_later(void **state)
{
    (void)state;
    /* Overflow during the disarm; its NMI arrives after the flag is down: the counter's. */
    overflow_while_disarming(fake_model_amd_zen2);
    assert_false(pmu_armed_this_cpu());
    assert_true(fake.cpu[0].nmi_pending);
    fake_release_nmis();
    assert_true(fake.last_nmi_mine);
    assert_int_equal(fake.nmis_mine, 2); /* the probe's and this one */
    /* The window admitted that one NMI: the next, even at once, is genuine without a look at the counter. */
    unsigned accesses = fake.msr_accesses;
    assert_false(fake_inject_nmi());
    assert_int_equal(fake.msr_accesses, accesses);

    /* Minutes later, the counter sitting disabled: a genuine NMI must panic, not be read as a sample. */
    fake_advance(120 * 1000 * MS);
    assert_false(fake_inject_nmi());
    assert_int_equal(fake.nmis_genuine, 2);
}

static void amd_zen2_stale_sign_bit_is_not_an_overflow(void **state)
{
    (void)state;
    overflow_while_disarming(fake_model_amd_zen2);
    /* The overflow's NMI is lost: the disabled counter keeps a value whose sign bit is clear -- what an
     * overflow looks like on this part. Minutes later a genuine NMI must still be genuine. */
    fake.cpu[0].nmi_pending = false;
    fake.hold_nmis = false;
    assert_int_equal(fake.cpu[0].amd_ctr[0] & BIT(47), 0);
    fake_advance(120 * 1000 * MS);
    assert_false(fake_inject_nmi());

    /* And a CPU that was never armed never looks at its counter at all. */
    fake_cpu_index = 1;
    fake.cpu[1].amd_ctr[0] = 5; /* "overflowed", by the sign bit */
    unsigned accesses = fake.msr_accesses;
    assert_false(fake_inject_nmi());
    assert_int_equal(fake.msr_accesses, accesses);
}

/* ---- AMD Zen 4: PerfMonV2 ------------------------------------------------------------------------------ */

static void amd_zen4_perfmon_v2(void **state)
{
    (void)state;
    boot(fake_model_amd_zen4, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_string_equal(pmu_source_name(), "pmu/nmi amd pmc0 ev0x76 perfmon-v2");

    unsigned from = fake.log_len;
    assert_true(pmu_arm_this_cpu());
    unsigned i = from;
    expect_write(i++, FAKE_MSR_AMD_GLOBAL_STATUS_CLR, 1); /* a stale overflow cleared */
    expect_lvt(i++, LVT_DELIVERY_NMI);
    expect_write(i++, FAKE_MSR_AMD_CTR0, (0 - MS) & MASK(48));
    expect_write(i++, FAKE_MSR_AMD_CTL0, AMD_COUNT | AMD_INT);
    expect_write(i, FAKE_MSR_AMD_GLOBAL_CTL, 1); /* the enable, last, flag up */
    assert_true(fake.log[i++].armed);
    assert_int_equal(fake.log_len, i);

    from = fake.log_len;
    run_periods(10);
    /* Each NMI: counter reloaded, status cleared through the clear register, LVT unmasked. */
    int nmi = fake_find(from, FAKE_NMI, 0);
    assert_true(nmi >= 0);
    expect_write((unsigned)nmi + 1, FAKE_MSR_AMD_CTR0, (0 - MS) & MASK(48));
    expect_write((unsigned)nmi + 2, FAKE_MSR_AMD_GLOBAL_STATUS_CLR, 1);
    expect_lvt((unsigned)nmi + 3, LVT_DELIVERY_NMI);

    /* Mid-period: the status is clear, so a genuine NMI is genuine. */
    from = genuine_nmi_then_disarm(MS / 2);
    expect_write(from, FAKE_MSR_AMD_GLOBAL_CTL, 0);
    assert_true(fake.log[from].armed);
    expect_write(from + 1, FAKE_MSR_AMD_CTL0, 0);
    assert_true(fake.log[from + 1].armed);
    assert_false(pmu_armed_this_cpu());

    describe_now();
    expect_described("perfmon:    PerfCtrExtCore yes (6 core counters at 0xc0010200)\n");
    expect_described("perfmon:    PerfMonV2 yes, 6 core counters\n");
    expect_described("family:     0x19 model 0x11 stepping 1\n");
    expect_described("probe:      counts: the counter counts and its overflow arrives as an NMI\n");
    expect_described("profile:    pmu/nmi amd pmc0 ev0x76 perfmon-v2\n");
}

static void amd_zen4_late_overflow(void **state)
{
    (void)state;
    overflow_while_disarming(fake_model_amd_zen4);
    fake_release_nmis();
    assert_true(fake.last_nmi_mine);
    assert_int_equal(fake.cpu[0].amd_global_status, 0);
    fake_advance(120 * 1000 * MS);
    assert_false(fake_inject_nmi());
}

/* ---- AMD with legacy counters only ---------------------------------------------------------------------- */

static void amd_legacy_only_refused_untouched(void **state)
{
    (void)state;
    boot(fake_model_amd_legacy_only, NULL);
    assert_int_equal(pmu_probe(), PMU_NOT_CLAIMED);
    assert_string_equal(pmu_verdict_reason(), "no usable PMU: CPUID 0x80000001 ECX bit 23 (PerfCtrExtCore) is "
                                              "clear, and the legacy counters are never used");
    assert_false(pmu_arm_this_cpu());
    assert_false(fake_inject_nmi());
    describe_now();
    expect_described("perfmon:    PerfCtrExtCore no\n");
    assert_int_equal(fake.msr_accesses, 0);
}

static void amd_legacy_only_claimed_faults(void **state)
{
    (void)state;
    /* Told to believe in the core extension, the probe touches it, takes the #GP, and says so -- and still
     * never goes near the legacy counters. */
    boot(fake_model_amd_legacy_only, "claim-amd");
    assert_int_equal(pmu_probe(), PMU_FAULTED);
    assert_string_equal(pmu_verdict_reason(),
                        "MSR 0xc0010201 raised #GP while probing (pmu=claim-amd made CPUID claim a PMU)");
    assert_false(pmu_usable());
    assert_false(pmu_arm_this_cpu());
    describe_now();
    expect_described("probe:      faulted: MSR 0xc0010201");
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               amd_zen2_probe_and_arm, amd_zen2_late_overflow_then_genuine_minutes_later,
               amd_zen2_stale_sign_bit_is_not_an_overflow, amd_zen4_perfmon_v2, amd_zen4_late_overflow,
               amd_legacy_only_refused_untouched, amd_legacy_only_claimed_faults)
