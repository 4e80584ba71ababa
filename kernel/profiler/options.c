/* kernel/profiler/options.c: the profiler's boot options (kernel/profiler.h) -- profile.hz=, the tick's rate and
 * so the tick source's sampling rate, and profile.ring_records=, a test knob that makes every CPU's ring
 * smaller than PROFILE_RING_RECORDS so a test can show the window's drain outrunning the ring on a host that
 * gives QEMU a fifth of its ticks. Each bad value is one warning line, and the default stays. */
#include "kernel/profiler.h"

#include "hal/cpu.h"
#include "kernel/lib/parse.h"
#include "kernel/log.h"

static uint32_t ring_records = PROFILE_RING_RECORDS;

void profiler_set_tick_rate(const char *hz_option)
{
    uint64_t hz;
    if (!hz_option)
        return;
    if (!parse_u64_range(hz_option, TICK_HZ_MIN, TICK_HZ_MAX, &hz)) {
        log_warn("profile: profile.hz=%s is not a rate %u..%u Hz; the tick stays at %u Hz", hz_option,
                 TICK_HZ_MIN, TICK_HZ_MAX, TICK_HZ_DEFAULT);
        return;
    }
    tick_set_hz((unsigned)hz);
    log_info("profile: the tick samples at %u Hz (profile.hz=)", (unsigned)hz);
}

bool profiler_set_ring_records(const char *records_option)
{
    uint64_t n;
    if (!records_option)
        return true;
    /* a power of two (the ring's fill is the difference of free-running indexes) */
    if (!parse_u64_range(records_option, PROFILE_RING_RECORDS_MIN, PROFILE_RING_RECORDS, &n) || (n & (n - 1))) {
        log_warn("profile: profile.ring_records=%s is not a power of two %u..%u; each ring holds %u records",
                 records_option, PROFILE_RING_RECORDS_MIN, PROFILE_RING_RECORDS, ring_records);
        return false;
    }
    ring_records = (uint32_t)n;
    log_info("profile: each CPU's ring holds %u records (profile.ring_records=, a test knob)", ring_records);
    return true;
}

uint32_t profiler_ring_records(void)
{
    return ring_records;
}
