/* tests/unit/test_pmu.c: the PMU sample source (arch/x86_64/pmu.c and its Intel and AMD backends) on the fake
 * CPU of tests/unit/fake_cpu.c, one machine model at a time: what the probe concludes (verdict, source name,
 * reason), which MSRs are written in which order (the freeze bit cleared before anything is enabled, the armed
 * flag up before the counter is enabled and down only after it is disabled), which NMIs are the counter's and
 * which are genuine -- including an overflow in flight at disarm and a genuine NMI minutes later on AMD
 * before Zen 4 -- the cached verdict, pmu=off and the claim-* modes. After every test: the legacy AMD counters
 * at 0xC0010000..7 were never touched, and the fake's log did not overflow. */
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
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/lib/sink.h"

#define MS 2000000ull /* fake cycles per millisecond (fake_cycles_per_ms) */
#define BIT(n) (1ull << (n))
#define MASK(bits) ((bits) >= 64 ? ~0ull : BIT(bits) - 1)

/* Intel fixed counter 1's field in IA32_FIXED_CTR_CTRL, and AMD PERF_CTL0's fields. */
#define FIXED1_COUNT 0x30ull  /* OS | USR */
#define FIXED1_PMI 0x80ull
#define AMD_COUNT (0x76ull | BIT(16) | BIT(17) | BIT(22))
#define AMD_INT BIT(20)

static int setup(void **state)
{
    (void)state;
    fake_reset();
    pmu_reset_for_tests();
    fake_cycles_per_ms = MS;
    fake_cpu_index = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (fake.legacy_touches || fake.log_dropped)
        fake_dump_log();
    assert_int_equal(fake.legacy_touches, 0); /* in ANY test: the legacy AMD counters are never touched */
    assert_int_equal(fake.log_dropped, 0);
    assert_int_equal(fake.pmis_not_nmi, 0);   /* a PMI is only ever enabled with the LVT entry in NMI mode */
    assert_int_equal(fake.lvt_bad_writes, 0); /* no LVT write the APIC would take as an error */
    return 0;
}

/* A fresh machine, and the boot-time selection with the given pmu= value (NULL: none given). */
static void boot(void (*model)(void), const char *mode)
{
    model();
    pmu_reset_for_tests();
    pmu_select(mode);
}

static void expect_write(unsigned i, uint32_t msr, uint64_t value)
{
    if (i >= fake.log_len || fake.log[i].kind != FAKE_WRMSR || fake.log[i].msr != msr ||
        fake.log[i].value != value) {
        fake_dump_log();
        fail_msg("log[%u]: expected wrmsr 0x%x = 0x%llx", i, msr, (unsigned long long)value);
    }
}

static void expect_lvt(unsigned i, uint32_t value)
{
    if (i >= fake.log_len || fake.log[i].kind != FAKE_LVT || fake.log[i].value != value) {
        fake_dump_log();
        fail_msg("log[%u]: expected LVT PC = 0x%x", i, value);
    }
}

static void expect_nmi(unsigned i, bool mine)
{
    if (i >= fake.log_len || fake.log[i].kind != FAKE_NMI || fake.log[i].value != (uint64_t)mine) {
        fake_dump_log();
        fail_msg("log[%u]: expected an NMI, %s", i, mine ? "mine" : "genuine");
    }
}

/* Captures what a sink is given. */
static char described[2048];
static void describe_now(void)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, described, sizeof described);
    pmu_describe(&bs.sink);
    assert_int_equal(bs.truncated, 0);
}

static void expect_described(const char *line)
{
    if (!strstr(described, line))
        fail_msg("lscpu lacks \"%s\"; it said:\n%s", line, described);
}

/* Runs this CPU armed for n periods and checks n NMIs arrived, each claimed, none lost. */
static void run_periods(unsigned n)
{
    unsigned mine = fake.nmis_mine, genuine = fake.nmis_genuine;
    fake_run(n * MS + MS / 2);
    assert_int_equal(fake.nmis_mine - mine, n);
    assert_int_equal(fake.nmis_genuine - genuine, 0);
    assert_int_equal(fake.pmis_lost, 0);
    assert_int_equal(fake.cpu[fake_cpu_index].lvtpc, LVT_DELIVERY_NMI); /* unmasked again after each */
}

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
    assert_string_equal(fake.log_text, "pmu: intel backend, pmu/nmi intel fixed-ctr1, claimed by CPUID; "
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

    /* With interrupts off throughout, and never armed: the probe has its own flag. */
    for (unsigned k = 0; k < fake.log_len; k++) {
        assert_false(fake.log[k].irqs_on);
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
    /* Disabled with the flag still up: the global enable first, then the field. */
    i = from;
    expect_write(i, FAKE_MSR_GLOBAL_CTRL, 0);
    assert_true(fake.log[i++].armed);
    expect_write(i, FAKE_MSR_FIXED_CTR_CTRL, 0);
    assert_true(fake.log[i++].armed);
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
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());

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
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
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
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
    fake.cpu[0].fixed_ctr[1] = 5;
    assert_false(fake_inject_nmi());
    fake.cpu[0].fixed_ctr[1] = (0 - MS / 2) & MASK(40);
    fake.cpu[0].global_status |= BIT(33);
    assert_true(fake_inject_nmi());
    assert_int_equal(fake.cpu[0].global_status & BIT(33), 0);
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
    boot(fake_model_intel_v4_freeze, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
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

/* ---- AMD Zen 2: core extension, the sign bit ------------------------------------------------------------ */

static void amd_zen2_probe_and_arm(void **state)
{
    (void)state;
    const uint64_t m48 = MASK(48);
    boot(fake_model_amd_zen2, NULL);
    assert_string_equal(fake.log_text, "pmu: amd backend, pmu/nmi amd pmc0 ev0x76, claimed by CPUID; "
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
    fake_run(MS / 3);
    assert_false(fake_inject_nmi());

    from = fake.log_len;
    pmu_disarm_this_cpu();
    expect_write(from, FAKE_MSR_AMD_CTL0, 0);
    assert_true(fake.log[from].armed);
    assert_false(pmu_armed_this_cpu());
}

static void amd_zen2_late_overflow_then_genuine_minutes_later(void **state)
{
    (void)state;
    boot(fake_model_amd_zen2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());

    /* Overflow during the disarm; its NMI arrives after the flag is down: the counter's. */
    fake_run(BIT(48) - fake.cpu[0].amd_ctr[0] - 50);
    fake.hold_nmis = true;
    pmu_disarm_this_cpu();
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
    boot(fake_model_amd_zen2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
    fake_run(BIT(48) - fake.cpu[0].amd_ctr[0] - 50);
    fake.hold_nmis = true;
    pmu_disarm_this_cpu();
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
    fake_run(MS / 2);
    assert_false(fake_inject_nmi());

    from = fake.log_len;
    pmu_disarm_this_cpu();
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
    boot(fake_model_amd_zen4, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
    fake_run(BIT(48) - fake.cpu[0].amd_ctr[0] - 50);
    fake.hold_nmis = true;
    pmu_disarm_this_cpu();
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

/* ---- a hypervisor that claims a PMU and swallows the writes --------------------------------------------- */

static void hypervisor_swallows_does_not_count(void **state)
{
    (void)state;
    boot(fake_model_hypervisor_swallows, NULL);
    uint64_t t0 = fake.tsc;
    assert_int_equal(pmu_probe(), PMU_DOES_NOT_COUNT);
    uint64_t spent = fake.tsc - t0;
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
    assert_string_equal(fake.log_text, "pmu: amd backend, pmu/nmi amd pmc0 ev0x76, claimed under "
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

static void counts_but_never_interrupts(void **state)
{
    (void)state;
    boot(fake_model_no_interrupt, NULL);
    uint64_t t0 = fake.tsc;
    assert_int_equal(pmu_probe(), PMU_NO_INTERRUPT);
    uint64_t spent = fake.tsc - t0;
    assert_true(spent >= 10 * MS);       /* waited the whole 10 ms for the NMI */
    assert_true(spent < 10 * MS + MS / 10);
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
    assert_string_equal(fake.log_text, "pmu: no PMU: CPUID leaf 0xA reports version 0: profile samples on the tick\n");
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
    assert_string_equal(fake.log_text, "pmu: off (pmu=off): profile samples on the tick\n");
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
    assert_int_equal(fake.log_lines, 2);
    assert_non_null(strstr(fake.log_text, "warning: pmu: unknown pmu=fast (auto, off, claim-intel or "
                                          "claim-amd): using auto\n"));
    assert_int_equal(pmu_probe(), PMU_COUNTS);
}

static void probe_runs_once_and_is_cached(void **state)
{
    (void)state;
    boot(fake_model_intel_v2, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    unsigned accesses = fake.msr_accesses, logged = fake.log_lines;
    fake.counts = false; /* were it asked again, it would now say "does not count" */
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    fake_cpu_index = 1;
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_int_equal(fake.msr_accesses, accesses);
    pmu_select("off"); /* selection happens once */
    assert_int_equal(pmu_verdict(), PMU_COUNTS);
    assert_int_equal(fake.log_lines, logged);
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

static void probe_fault_on_debugctl(void **state)
{
    (void)state;
    fake_model_intel_v4_freeze();
    fake.gp_msr = FAKE_MSR_DEBUGCTL;
    pmu_reset_for_tests();
    pmu_select(NULL);
    assert_int_equal(pmu_probe(), PMU_FAULTED);
    assert_string_equal(pmu_verdict_reason(), "MSR 0x1d9 raised #GP while probing (CPUID claims a PMU)");
    assert_false(pmu_arm_this_cpu());
}

static void probe_fault_mid_way_leaves_it_disabled(void **state)
{
    (void)state;
    /* The global enable refuses: #GP after the field was set. The clean-up still clears the field. */
    fake_model_intel_v2();
    fake.gp_msr = FAKE_MSR_GLOBAL_CTRL;
    pmu_reset_for_tests();
    pmu_select(NULL);
    assert_int_equal(pmu_probe(), PMU_FAULTED);
    assert_string_equal(pmu_verdict_reason(), "MSR 0x38f raised #GP while probing (CPUID claims a PMU)");
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
    assert_int_equal(fake.log_lines, 1);
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
                        "perfmon:    arch perfmon v2, 2 general counters of 40 bits, 3 fixed of 40 bits\n"
                        "perfmon:    fixed counter 1 (unhalted core cycles): yes\n"
                        "probe:      counts: the counter counts and its overflow arrives as an NMI\n"
                        "profile:    pmu/nmi intel fixed-ctr1\n");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(intel_v2_probe_counts),
        T(intel_v2_arm_run_disarm),
        T(intel_late_overflow_after_disarm),
        T(intel_lost_pmi_then_genuine_nmi),
        T(intel_overflow_read_from_status_exactly),
        T(intel_v4_freeze_cleared_first),
        T(intel_freeze_would_stop_the_counter),
        T(intel_v5_without_fixed1_refused),
        T(intel_v5_bitmap_offers_fixed1),
        T(intel_hybrid_both_core_types),
        T(amd_zen2_probe_and_arm),
        T(amd_zen2_late_overflow_then_genuine_minutes_later),
        T(amd_zen2_stale_sign_bit_is_not_an_overflow),
        T(amd_zen4_perfmon_v2),
        T(amd_zen4_late_overflow),
        T(amd_legacy_only_refused_untouched),
        T(amd_legacy_only_claimed_faults),
        T(hypervisor_swallows_does_not_count),
        T(qemu_amd_max_out_of_range_leaf),
        T(qemu_amd_max_claim_amd_does_not_count),
        T(qemu_amd_max_claim_intel),
        T(counts_but_never_interrupts),
        T(no_pmu_auto),
        T(no_pmu_claim_intel_does_not_count),
        T(pmu_off),
        T(pmu_bad_value_means_auto),
        T(probe_runs_once_and_is_cached),
        T(period_has_a_floor),
        T(period_is_a_millisecond_and_stated),
        T(probe_fault_on_debugctl),
        T(probe_fault_mid_way_leaves_it_disabled),
        T(arm_fault_leaves_cpu_on_the_tick),
        T(genuine_nmi_with_nothing_selected),
        T(probe_without_select_selects_auto),
        T(intel_v2_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
