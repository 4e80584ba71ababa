/* tests/unit/pmu_fixture.c: the setup, teardown and checks the PMU tests share (see pmu_fixture.h), over the
 * fake CPU of tests/unit/fake_cpu.c. */
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
#include "hal/pmu.h"
#include "kernel/lib/sink.h"
#include "pmu_fixture.h"

int setup(void **state)
{
    (void)state;
    fake_reset();
    pmu_reset_for_tests();
    fake_cycles_per_ms = MS;
    fake_cpu_index = 0;
    return 0;
}

int teardown(void **state)
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
void boot(void (*model)(void), const char *mode)
{
    model();
    pmu_reset_for_tests();
    pmu_select(mode);
}

void boot_armed(void (*model)(void))
{
    boot(model, NULL);
    assert_int_equal(pmu_probe(), PMU_COUNTS);
    assert_true(pmu_arm_this_cpu());
}

void expect_write(unsigned i, uint32_t msr, uint64_t value)
{
    if (i >= fake.log_len || fake.log[i].kind != FAKE_WRMSR || fake.log[i].msr != msr ||
        fake.log[i].value != value) {
        fake_dump_log();
        fail_msg("log[%u]: expected wrmsr 0x%x = 0x%llx", i, msr, (unsigned long long)value);
    }
}

void expect_lvt(unsigned i, uint32_t value)
{
    if (i >= fake.log_len || fake.log[i].kind != FAKE_LVT || fake.log[i].value != value) {
        fake_dump_log();
        fail_msg("log[%u]: expected LVT PC = 0x%x", i, value);
    }
}

void expect_nmi(unsigned i, bool mine)
{
    if (i >= fake.log_len || fake.log[i].kind != FAKE_NMI || fake.log[i].value != (uint64_t)mine) {
        fake_dump_log();
        fail_msg("log[%u]: expected an NMI, %s", i, mine ? "mine" : "genuine");
    }
}

char described[2048];

void describe_now(void)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, described, sizeof described);
    pmu_describe(&bs.sink);
    assert_int_equal(bs.truncated, 0);
}

void expect_described(const char *line)
{
    if (!strstr(described, line))
        fail_msg("lscpu lacks \"%s\"; it said:\n%s", line, described);
}

/* Runs this CPU armed for n periods and checks n NMIs arrived, each claimed, none lost. */
void run_periods(unsigned n)
{
    unsigned mine = fake.nmis_mine, genuine = fake.nmis_genuine;
    fake_run(n * MS + MS / 2);
    assert_int_equal(fake.nmis_mine - mine, n);
    assert_int_equal(fake.nmis_genuine - genuine, 0);
    assert_int_equal(fake.pmis_lost, 0);
    assert_int_equal(fake.cpu[fake_cpu_index].lvtpc, LVT_DELIVERY_NMI); /* unmasked again after each */
}
