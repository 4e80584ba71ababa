/* arch/x86_64/time_ref.h: the arithmetic of the clocks the TSC is calibrated against, kept apart from the port
 * reads so that a host test can check it: the ACPI PM timer's wrap-around and CPUID's stated TSC rate. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define ACPI_PM_TIMER_HZ 3579545u /* the ACPI PM timer's fixed rate (ACPI spec, 4.8.3.3) */

/* Counts from `start` to `now` of a PM timer that is 24 bits wide, or 32 when the FADT says TMR_VAL_EXT: one wrap
 * at most, which at 3.58 MHz is 4.7 s (24 bits), far more than any window measured with it. */
uint32_t pm_timer_elapsed(uint32_t start, uint32_t now, bool counter_32bit);

/* The TSC's rate in Hz as CPUID states it, or 0 when it does not: leaf 0x15 (EAX = denominator, EBX = numerator,
 * ECX = the core crystal's Hz) when all three are set; else leaf 0x16's base MHz (EAX), which is the TSC's rate on
 * the Intel parts that give the ratio but not the crystal. `max_leaf` is CPUID 0's EAX: a leaf above it returns
 * another leaf's data (QEMU-FACTS), so it is read as absent. */
uint64_t cpuid_tsc_hz(uint32_t max_leaf, const uint32_t leaf15[4], const uint32_t leaf16[4]);
