/* tests/unit/test_smp_left.c: arch/x86_64/smp_left.c, the boot log's account of CPUs left in their reset state, at
 * counts no emulator here boots (QEMU's TCG refuses more than 255 CPUs): past MAX_CPUS (256), past the MADT
 * entries remembered (ACPI_MAX_CPUS), with ids too scattered for one line, and with none left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/arch.h"
#include "arch/x86_64/smp_left.h"
#include "hal/cpu.h"
#include "unit_main.h"

static uint32_t ids[ACPI_MAX_CPUS];
static char info[160], warn[224];

static void ids_from(uint32_t first, unsigned step)
{
    for (unsigned i = 0; i < ACPI_MAX_CPUS; i++)
        ids[i] = first + i * step;
}

static void max_cpus_is_256(void **state)
{
    (void)state;
    assert_int_equal(MAX_CPUS, 256);
}

static void all_started(void **state)
{
    (void)state;
    ids_from(0, 1);
    smp_left_lines(ids, 255, 255, 0, 255, info, sizeof info, warn, sizeof warn);
    assert_string_equal(info, "smp: the firmware listed 255 cpus; all 255 started");
    assert_string_equal(warn, "");
}

/* 300 listed, MAX_CPUS started, the loop stopped after the 256th: ids 256-299 never tried. */
static void over_max_cpus(void **state)
{
    (void)state;
    ids_from(0, 1);
    smp_left_lines(ids, 300, MAX_CPUS, 0, MAX_CPUS, info, sizeof info, warn, sizeof warn);
    assert_string_equal(info, "smp: the firmware listed 300 cpus; 256 started, 0 did not start, 44 left over "
                              "MAX_CPUS (256)");
    assert_string_equal(warn, "smp: left in their reset state: APIC ids 256-299 (this kernel starts at most "
                              "MAX_CPUS=256 cpus)");
}

/* More listed than the MADT entries remembered: the count is whole, the ids are those remembered. */
static void over_what_was_remembered(void **state)
{
    (void)state;
    ids_from(0, 1);
    smp_left_lines(ids, 600, MAX_CPUS, 1, MAX_CPUS + 1, info, sizeof info, warn, sizeof warn);
    assert_string_equal(info, "smp: the firmware listed 600 cpus; 256 started, 1 did not start, 343 left over "
                              "MAX_CPUS (256)");
    assert_string_equal(warn, "smp: left in their reset state: APIC ids 257-511 (this kernel starts at most "
                              "MAX_CPUS=256 cpus)");
}

/* Every other id (sparse topologies): singles, cut short with ",..." on one line. */
static void scattered_ids_are_cut(void **state)
{
    (void)state;
    ids_from(0, 2);
    smp_left_lines(ids, 400, MAX_CPUS, 0, MAX_CPUS, info, sizeof info, warn, sizeof warn);
    assert_non_null(strstr(warn, "APIC ids 512,514,516,"));
    assert_non_null(strstr(warn, ",... (this kernel starts at most MAX_CPUS=256 cpus)"));
    assert_true(strlen(warn) < 200);
}

/* Some did not start (an x2APIC id in xAPIC mode, say) and none were left over: no list. */
static void failed_but_none_over(void **state)
{
    (void)state;
    ids_from(0, 1);
    smp_left_lines(ids, 4, 3, 1, 4, info, sizeof info, warn, sizeof warn);
    assert_string_equal(info, "smp: the firmware listed 4 cpus; 3 started, 1 did not start, 0 left over "
                              "MAX_CPUS (256)");
    assert_string_equal(warn, "");
}

UNIT_MAIN(NULL, NULL,
          max_cpus_is_256, all_started, over_max_cpus, over_what_was_remembered, scattered_ids_are_cut,
          failed_but_none_over)
