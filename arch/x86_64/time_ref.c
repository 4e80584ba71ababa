/* arch/x86_64/time_ref.c: the reference clocks' arithmetic (time_ref.h): PM timer wrap-around and the TSC rate
 * CPUID states. No port or MSR is touched here; time.c reads the hardware and hands the numbers in. */
#include "arch/x86_64/time_ref.h"

uint32_t pm_timer_elapsed(uint32_t start, uint32_t now, bool counter_32bit)
{
    uint32_t mask = counter_32bit ? 0xFFFFFFFFu : 0x00FFFFFFu;
    return (now - start) & mask;
}

uint64_t cpuid_tsc_hz(uint32_t max_leaf, const uint32_t leaf15[4], const uint32_t leaf16[4])
{
    uint32_t denominator = 0, numerator = 0, crystal_hz = 0, base_mhz = 0;
    if (max_leaf >= 0x15) {
        denominator = leaf15[0];
        numerator = leaf15[1];
        crystal_hz = leaf15[2];
    }
    if (max_leaf >= 0x16)
        base_mhz = leaf16[0] & 0xFFFF;
    bool ratio = denominator != 0 && numerator != 0;
    if (ratio && crystal_hz != 0)
        return (uint64_t)crystal_hz * numerator / denominator;
    if (base_mhz != 0)
        return (uint64_t)base_mhz * 1000000u; /* the TSC runs at the base frequency where 0x16 is all there is */
    return 0;
}
