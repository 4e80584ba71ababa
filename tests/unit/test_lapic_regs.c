/* tests/unit/test_lapic_regs.c: arch/x86_64/lapic_regs.h -- each xAPIC register the kernel uses at the MSR the
 * SDM's x2APIC table gives it, the x2APIC ICR as one 64-bit value with the 32-bit destination in the high half,
 * the xAPIC ICR's 8-bit destination, and the APIC id read in either mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/x86_64/lapic_regs.h"
#include "unit_main.h"

static void registers_map_to_the_sdm_msrs(void **state)
{
    (void)state;
    assert_int_equal(lapic_x2apic_msr(LAPIC_ID), 0x802);
    assert_int_equal(lapic_x2apic_msr(LAPIC_TPR), 0x808);
    assert_int_equal(lapic_x2apic_msr(LAPIC_EOI), 0x80B);
    assert_int_equal(lapic_x2apic_msr(LAPIC_SVR), 0x80F);
    assert_int_equal(lapic_x2apic_msr(LAPIC_ICR_LOW), 0x830);
    assert_int_equal(lapic_x2apic_msr(LAPIC_LVT_TIMER), 0x832);
    assert_int_equal(lapic_x2apic_msr(LAPIC_LVT_PERFCNT), 0x834);
    assert_int_equal(lapic_x2apic_msr(LAPIC_TIMER_INITIAL), 0x838);
    assert_int_equal(lapic_x2apic_msr(LAPIC_TIMER_CURRENT), 0x839);
    assert_int_equal(lapic_x2apic_msr(LAPIC_TIMER_DIVIDE), 0x83E);
}

static void icr_encodings(void **state)
{
    (void)state;
    /* NMI (delivery mode 4) to APIC id 256: the destination whole in bits 32-63, nothing lost to 8 bits. */
    assert_int_equal(lapic_x2apic_icr(256, 0x400), 0x0000010000000400ull);
    assert_int_equal(lapic_x2apic_icr(0xFFFFFFFFu, 0xF0), 0xFFFFFFFF000000F0ull);
    assert_int_equal(lapic_x2apic_icr(3, 0x4500), 0x0000000300004500ull); /* INIT, level assert */
    assert_int_equal(lapic_xapic_icr_high(3), 0x03000000u);
    assert_int_equal(lapic_xapic_icr_high(XAPIC_MAX_ID), 0xFE000000u);
}

static void apic_id_in_either_mode(void **state)
{
    (void)state;
    assert_int_equal(lapic_id_of(0x05000000u, 0), 5);
    assert_int_equal(lapic_id_of(300, 1), 300);
    assert_int_equal(lapic_id_of(0x05000000u, 1), 0x05000000u);
}

UNIT_MAIN(NULL, NULL,
          registers_map_to_the_sdm_msrs, icr_encodings, apic_id_in_either_mode)
