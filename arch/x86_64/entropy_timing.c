/* arch/x86_64/entropy_timing.c: hal/entropy.h's timings on a PC -- the cycle counter against a crystal of its own
 * (PIT channel 2 one-shots, armed as time.c's calibration arms them, or the ACPI PM timer where there is no PIT)
 * and against the RTC (its seconds edge and its date), plus the tick pool entropy.c keeps. Under QEMU the RTC
 * follows the host's clock even under deterministic execution (-icount), so the edge's position and the date
 * differ from one boot to the next where the cycle counter and the PIT repeat. */
#include "hal/entropy.h"

#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"

#define PIT_WINDOW_COUNTS 60u    /* about 50 us a reading */
#define PIT_WINDOW_LIMIT_MS 5u   /* a PIT that never runs out ends the reading, not the boot */
#define RTC_EDGE_LIMIT_MS 1100u  /* the seconds edge comes within a second; past that, no RTC */

#define PM_WINDOW_COUNTS 179u     /* about 50 us of the ACPI PM timer a reading */

/* Cycles across short windows of a crystal of its own: PIT one-shots, or where there is no PIT channel 2 (an OUT2
 * always high would give readings of nothing but loop overhead) the ACPI PM timer's counts. */
static size_t pit_readings(uint64_t *out, size_t cap)
{
    bool pit = pit2_present();
    if (!pit && !acpi.pm_timer_port)
        return 0;
    uint64_t limit = PIT_WINDOW_LIMIT_MS * cycles_per_ms();
    size_t n = 0;
    while (n < cap) {
        struct pm_timer_window pm = { 0, PM_WINDOW_COUNTS };
        if (pit)
            pit2_arm(PIT_WINDOW_COUNTS);
        else
            pm.start = pm_timer_read();
        uint64_t cycles = pit ? reference_window_cycles(pit2_over, 0, limit)
                              : reference_window_cycles(pm_timer_over, &pm, limit);
        if (!cycles)
            break;
        out[n++] = cycles;
    }
    return n;
}

/* CMOS register reads through the index port, NMIs left enabled (bit 7 clear): the kernel depends on them. */
static uint8_t cmos(uint8_t reg)
{
    outb(0x70, reg & 0x7f);
    return inb(0x71);
}

#define RTC_SECONDS 0x00
#define RTC_STATUS_A 0x0a
#define RTC_UPDATING 0x80

static size_t rtc_edge_readings(uint64_t *out, size_t cap)
{
    if (cap < 2)
        return 0;
    uint64_t limit = RTC_EDGE_LIMIT_MS * cycles_per_ms();
    uint64_t t0 = rdtsc(), now = t0, polls = 0;
    uint8_t first = cmos(RTC_SECONDS), seconds = first;
    while (seconds == first && now - t0 < limit) {
        pause();
        seconds = cmos(RTC_SECONDS);
        now = rdtsc();
        polls++;
    }
    if (seconds == first)
        return 0; /* no RTC, or one that does not tick */
    out[0] = now - t0;
    out[1] = polls;
    return 2;
}

static size_t wallclock_reading(uint64_t *out, size_t cap)
{
    if (cap < 1)
        return 0;
    /* Read outside an update (status A bit 7: the next 244 us may change the fields), bounded like the edge. */
    uint64_t limit = RTC_EDGE_LIMIT_MS * cycles_per_ms(), t0 = rdtsc();
    while ((cmos(RTC_STATUS_A) & RTC_UPDATING) && rdtsc() - t0 < limit)
        pause();
    static const uint8_t fields[] = { 0x00, 0x02, 0x04, 0x07, 0x08, 0x09, 0x32 }; /* s m h day month year century */
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof fields; i++)
        v = (v << 8) | cmos(fields[i]);
    out[0] = v;
    return 1;
}

size_t entropy_timing_read(enum entropy_timing which, uint64_t *out, size_t cap)
{
    switch (which) {
    case ENTROPY_PIT: return pit_readings(out, cap);
    case ENTROPY_RTC: return rtc_edge_readings(out, cap);
    case ENTROPY_TICKS: return entropy_tick_intervals(out, cap);
    case ENTROPY_WALLCLOCK: return wallclock_reading(out, cap);
    default: return 0;
    }
}
