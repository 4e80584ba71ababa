/* tests/unit/test_time_ref.c: the reference clocks' arithmetic (arch/x86_64/time_ref.c): the ACPI PM timer's
 * elapsed counts across its wrap at 24 and at 32 bits, and the TSC rate CPUID 0x15/0x16 states -- including a
 * leaf above CPUID's maximum, which QEMU answers with another leaf's data and must be read as absent. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/x86_64/time_ref.h"
#include "unit_main.h"

static void pm_timer_counts_forward_and_across_its_wrap(void **state)
{
    (void)state;
    assert_int_equal(pm_timer_elapsed(100, 71691, false), 71591);
    /* 24 bits: 0xFFFFF0 -> 0x10 is 0x20 counts; the top byte of a 32-bit read is noise and ignored */
    assert_int_equal(pm_timer_elapsed(0xFFFFF0, 0x000010, false), 0x20);
    assert_int_equal(pm_timer_elapsed(0xABFFFFF0, 0x12000010, false), 0x20);
    /* 32 bits (TMR_VAL_EXT) */
    assert_int_equal(pm_timer_elapsed(0xFFFFFFF0u, 0x10, true), 0x20);
    assert_int_equal(pm_timer_elapsed(0x00FFFFF0u, 0x01000010u, true), 0x20);
    assert_int_equal(pm_timer_elapsed(5, 5, true), 0);
}

static void cpuid_states_the_tsc_rate_from_the_crystal_and_ratio(void **state)
{
    (void)state;
    /* a Skylake-era server: 25 MHz crystal, TSC ratio 188/2 */
    uint32_t l15[4] = {2, 188, 25000000, 0}, l16[4] = {2300, 3900, 100, 0};
    assert_int_equal(cpuid_tsc_hz(0x16, l15, l16), 2350000000ull);
    /* the ratio without the crystal: the base frequency of 0x16 */
    uint32_t no_crystal[4] = {2, 216, 0, 0};
    assert_int_equal(cpuid_tsc_hz(0x16, no_crystal, l16), 2300000000ull);
    /* only the base frequency (0x16's EAX low 16 bits) */
    uint32_t empty[4] = {0, 0, 0, 0}, l16_high_bits[4] = {0xABCD0000u | 3000, 0, 0, 0};
    assert_int_equal(cpuid_tsc_hz(0x16, empty, l16_high_bits), 3000000000ull);
}

static void a_leaf_above_the_maximum_or_all_zero_states_nothing(void **state)
{
    (void)state;
    uint32_t l15[4] = {2, 188, 25000000, 0}, l16[4] = {2300, 3900, 100, 0}, empty[4] = {0};
    /* QEMU's TCG: maximum basic leaf 0xd, and leaf 0x15 would read as leaf 0xd's data */
    assert_int_equal(cpuid_tsc_hz(0xd, l15, l16), 0);
    /* 0x15 present but 0x16 not: the ratio alone, no crystal, no base: nothing */
    uint32_t no_crystal[4] = {2, 216, 0, 0};
    assert_int_equal(cpuid_tsc_hz(0x15, no_crystal, l16), 0);
    assert_int_equal(cpuid_tsc_hz(0x16, empty, empty), 0);
    /* a zero denominator is not a ratio */
    uint32_t zero_denominator[4] = {0, 188, 25000000, 0};
    assert_int_equal(cpuid_tsc_hz(0x15, zero_denominator, empty), 0);
}

UNIT_MAIN(NULL, NULL,
          pm_timer_counts_forward_and_across_its_wrap, cpuid_states_the_tsc_rate_from_the_crystal_and_ratio,
          a_leaf_above_the_maximum_or_all_zero_states_nothing)
