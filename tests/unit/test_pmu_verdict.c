/* tests/unit/test_pmu_verdict.c: two promises of arch/x86_64/pmu.c that nothing else tests. The refusals:
 * Intel arch perfmon v1, and fixed counters narrower than 32 bits (CPUID.0AH:EDX[12:5]), are refused before
 * any MSR is touched, with the reason the tick's report will give. The publication: the verdict word is stored
 * (release) after its reason and the values it covers -- the counter's width, the reload, the period, the
 * backend -- so a CPU that sees the verdict (acquire) sees them all, and one that does not yet see it can
 * neither read a half-written reason nor arm a counter. Checked at the moment pmu.c formats the reason (through
 * a wrapped kvsnprintf), by another CPU arming right after, and by a reader thread racing real probes. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#include "hal/pmu.h"
#include "unit_main.h"

#define MS 2000000ull
#define BIT(n) (1ull << (n))

static int setup(void **state)
{
    (void)state;
    fake_reset();
    pmu_reset_for_tests();
    fake_cycles_per_ms = MS;
    fake_cpu_index = 0;
    fake_cpu_count = 2;
    return 0;
}

static void boot(void (*model)(void))
{
    model();
    pmu_reset_for_tests();
    pmu_select(NULL);
}

/* ---- what pmu.c does at the moment it formats the reason ---------------------------------------------- */

size_t __real_kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);

static unsigned formats;             /* reasons formatted */
static enum pmu_verdict verdict_then; /* what a reader saw at the last one */
static uint64_t period_then;
static bool armed_then;               /* whether CPU 1 could arm then */
static bool try_arming_then;
/* pmu.c's reason buffer (what pmu_verdict_reason() answers once a verdict is out), learnt in setup_group: only
 * formats into it are the reason's -- the kernel's log (kernel/log.c) formats its lines with kvsnprintf too. */
static const char *reason_buf;

size_t __wrap_kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    if (buf != reason_buf)
        return __real_kvsnprintf(buf, n, fmt, ap);
    formats++;
    verdict_then = pmu_verdict();
    period_then = pmu_period_cycles();
    if (try_arming_then) {
        unsigned self = fake_cpu_index;
        fake_cpu_index = 1;
        armed_then = pmu_arm_this_cpu();
        fake_cpu_index = self;
    }
    return __real_kvsnprintf(buf, n, fmt, ap);
}

/* ---- the refusals -------------------------------------------------------------------------------------- */

static void expect_refused(const char *reason)
{
    assert_int_equal(pmu_verdict(), PMU_NOT_CLAIMED);
    assert_int_equal(pmu_probe(), PMU_NOT_CLAIMED);
    assert_string_equal(pmu_verdict_reason(), reason);
    assert_false(pmu_usable());
    assert_null(pmu_source_name());
    assert_int_equal(pmu_period_cycles(), 0);
    assert_int_equal(fake.msr_accesses, 0); /* refused from CPUID alone: no MSR read, no probe */
    fake_cpu_index = 1;
    assert_false(pmu_arm_this_cpu());
    fake_cpu_index = 0;
    assert_int_equal(fake.msr_accesses, 0);
}

static void intel_v1_refused(void **state)
{
    (void)state;
    boot(fake_model_intel_v1);
    expect_refused("no usable PMU: arch perfmon v1 has no fixed counters (v2 or later needed)");
    if (!strstr(fake_log_text, "pmu: no usable PMU: arch perfmon v1 has no fixed counters (v2 or later needed): "
                               "profile samples on the tick\n"))
        fail_msg("boot log: %s", fake_log_text);
}

static void narrow_fixed_counters_refused(void **state)
{
    (void)state;
    static const unsigned widths[] = { 31, 24, 16, 1, 0 };
    for (unsigned i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "no usable PMU: CPUID leaf 0xA gives the fixed counters %u bits", widths[i]);
        fake_model_intel_narrow_fixed(widths[i]);
        pmu_reset_for_tests();
        pmu_select(NULL);
        expect_refused(want);
        if (!strstr(fake_log_text, want))
            fail_msg("boot log: %s", fake_log_text);
    }
    /* Wider than a register is refused too. */
    fake_model_intel_narrow_fixed(65);
    pmu_reset_for_tests();
    pmu_select(NULL);
    expect_refused("no usable PMU: CPUID leaf 0xA gives the fixed counters 65 bits");
}

static void thirty_two_bit_fixed_counters_accepted(void **state)
{
    (void)state;
    fake_model_intel_narrow_fixed(32);
    pmu_reset_for_tests();
    pmu_select(NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_int_equal(pmu_period_cycles(), MS); /* below the sign bit with room to spare */
}

/* ---- the publication ----------------------------------------------------------------------------------- */

static void reason_is_formatted_before_the_verdict_is_stored(void **state)
{
    (void)state;
    boot(fake_model_intel_v2);
    formats = 0;
    try_arming_then = true;
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    try_arming_then = false;
    assert_int_equal(formats, 1);
    /* While the reason was being written, a reader saw no verdict, no period, and CPU 1 could not arm. */
    assert_int_equal(verdict_then, PMU_NOT_PROBED);
    assert_int_equal(period_then, 0);
    assert_false(armed_then);
    /* Once it is out, CPU 1 arms with exactly the reload the probe computed before publishing. */
    unsigned log_from = fake.log_len;
    fake_cpu_index = 1;
    assert_true(pmu_arm_this_cpu());
    int w = fake_find(log_from, FAKE_WRMSR, FAKE_MSR_FIXED_CTR1);
    assert_true(w >= 0);
    assert_int_equal(fake.log[w].value, (0 - MS) & (BIT(40) - 1));
    assert_int_equal(fake.log[w].cpu, 1);
    pmu_disarm_this_cpu();
    fake_cpu_index = 0;
    assert_string_equal(pmu_verdict_reason(), "the counter counts and its overflow arrives as an NMI");
}

static void refusal_is_formatted_before_the_verdict_is_stored(void **state)
{
    (void)state;
    formats = 0;
    fake_model_intel_v1();
    pmu_reset_for_tests();
    pmu_select(NULL); /* the refusal is published by the selection */
    assert_int_equal(formats, 1);
    assert_int_equal(verdict_then, PMU_NOT_PROBED);
    assert_int_equal(pmu_verdict(), PMU_NOT_CLAIMED);
}

/* A reader on another thread, as another CPU would be: the moment it sees a verdict, everything the verdict
 * covers must read complete. Run against many probes; the writer's fake hardware is the writer's alone (the
 * reader only calls what any context may call). */
struct reader {
    pthread_t thread;
    atomic_bool go;
    bool saw;
    enum pmu_verdict verdict;
    char reason[160];
    uint64_t period;
    const char *source;
};

static void *read_verdict(void *arg)
{
    struct reader *r = arg;
    while (!atomic_load(&r->go))
        ;
    for (unsigned long spins = 0; spins < 200000000ul; spins++) {
        enum pmu_verdict v = pmu_verdict();
        if (v == PMU_NOT_PROBED)
            continue;
        r->verdict = v;
        r->period = pmu_period_cycles();
        r->source = pmu_source_name();
        strncpy(r->reason, pmu_verdict_reason(), sizeof r->reason - 1);
        r->saw = true;
        break;
    }
    return 0;
}

static void a_reader_that_sees_the_verdict_sees_all_it_covers(void **state)
{
    (void)state;
    for (unsigned round = 0; round < 50; round++) {
        boot(fake_model_intel_v2);
        struct reader r;
        memset(&r, 0, sizeof r);
        assert_int_equal(pthread_create(&r.thread, 0, read_verdict, &r), 0);
        atomic_store(&r.go, true);
        assert_int_equal(pmu_probe(), PMU_COUNTS);
        pthread_join(r.thread, 0);
        assert_true(r.saw);
        assert_int_equal(r.verdict, PMU_COUNTS);
        assert_string_equal(r.reason, "the counter counts and its overflow arrives as an NMI");
        assert_int_equal(r.period, MS);
        assert_non_null(r.source);
        assert_string_equal(r.source, "pmu/nmi intel fixed-ctr1");
    }
}

static int setup_group(void **state)
{
    (void)state;
    fake_model_intel_v2();
    pmu_reset_for_tests();
    pmu_select(NULL);
    if (pmu_probe() != PMU_COUNTS)
        return -1;
    reason_buf = pmu_verdict_reason();
    return 0;
}

UNIT_MAIN_EACH(setup, NULL, setup_group, NULL,
               intel_v1_refused, narrow_fixed_counters_refused, thirty_two_bit_fixed_counters_accepted,
               reason_is_formatted_before_the_verdict_is_stored, refusal_is_formatted_before_the_verdict_is_stored,
               a_reader_that_sees_the_verdict_sees_all_it_covers)
