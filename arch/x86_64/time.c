/* arch/x86_64/time.c: the kernel's one clock and its tick. The TSC and the LAPIC timer are calibrated over the
 * shortest of five 20 ms windows of a reference clock: PIT channel 2 (a gate-driven one-shot at 1.193182 MHz,
 * the one fixed frequency every PC had); where it is not there or never runs out (a board with the 8254's clock
 * gated off, QEMU's pit=off), the ACPI PM timer the FADT names (3.579545 MHz); where neither is, the rate
 * CPUID 0x15/0x16 states, with the LAPIC timer measured against the TSC. Every wait is bounded: a dead clock is
 * one boot line, never a hang. Then time_ns() is a multiply and a shift of the TSC, and every CPU runs its LAPIC
 * timer periodically at tick_hz() (TICK_HZ_DEFAULT, or profile.hz= from the command line). */
#include "hal/compiler.h"
#include "arch/x86_64/arch.h"
#include "arch/x86_64/time_ref.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "kernel/log.h"

#define PIT_HZ 1193182u
#define CALIBRATION_MS 20u
/* A reference that has not moved after this many TSC cycles is dead: 0.7 s at 6 GHz, 4 s at 1 GHz, where the
 * window is 20 ms. Cycles because the TSC is the one thing known to advance before anything is calibrated. */
#define REFERENCE_DEADLINE_CYCLES (1ull << 32)
#define ASSUMED_TSC_HZ 1000000000ull

static uint64_t tsc_boot;
static uint64_t tsc_per_ms;
static uint64_t ns_mult;   /* ns = (tsc_delta * ns_mult) >> 32 */
static uint32_t lapic_ticks_per_ms;
static unsigned hz = TICK_HZ_DEFAULT;
static bool pit_works;

void pit2_arm(uint32_t count)
{
    /* Channel 2 gate on, speaker off; mode 0 (interrupt on terminal count), lobyte/hibyte. */
    outb(0x61, (inb(0x61) & ~0x02) | 0x01);
    outb(0x43, 0xB0);
    outb(0x42, count & 0xFF);
    outb(0x42, (count >> 8) & 0xFF);
    /* Restart the count by toggling the gate; OUT2 (port 0x61 bit 5) goes high when it reaches zero. */
    uint8_t gate = inb(0x61) & ~0x01;
    outb(0x61, gate);
    outb(0x61, gate | 0x01);
}

bool pit2_expired(void) { return (inb(0x61) & 0x20) != 0; }

bool pit2_present(void) { return pit_works; }

uint64_t reference_window_cycles(bool (*over)(void *ctx), void *ctx, uint64_t deadline_cycles)
{
    uint64_t t0 = rdtsc();
    while (!over(ctx)) {
        if (rdtsc() - t0 >= deadline_cycles)
            return 0;
        pause();
    }
    return rdtsc() - t0;
}

bool pit2_over(void *ctx)
{
    (void)ctx;
    return pit2_expired();
}

uint32_t pm_timer_read(void) { return inl(acpi.pm_timer_port); }

bool pm_timer_over(void *window)
{
    const struct pm_timer_window *w = window;
    return pm_timer_elapsed(w->start, pm_timer_read(), acpi.pm_timer_32bit) >= w->counts;
}

/* One calibration window: cycles and LAPIC timer counts over a window of the reference. */
struct window {
    uint64_t tsc;
    uint32_t lapic;
    const char *failure; /* why the reference could not be used, or NULL */
};

static struct window measure(bool (*over)(void *ctx), void *ctx, const char *dead)
{
    struct window w = {0};
    lapic_timer_calibrate_start();
    w.tsc = reference_window_cycles(over, ctx, REFERENCE_DEADLINE_CYCLES);
    w.lapic = lapic_timer_calibrate_read();
    if (!w.tsc)
        w.failure = dead;
    return w;
}

static struct window window_pit(void)
{
    pit2_arm(PIT_HZ * CALIBRATION_MS / 1000);
    /* In mode 0 OUT2 is low from the control word until the count runs out, 20 ms away: high now means no PIT
     * drives it (an unassigned port 0x61 reads 0xff). */
    if (pit2_expired())
        return (struct window){ .failure = "PIT channel 2 is not there (OUT2 is high as it is armed)" };
    return measure(pit2_over, 0, "PIT channel 2 never ran out (its clock gated off?)");
}

static struct window window_pm_timer(void)
{
    if (!acpi.pm_timer_port)
        return (struct window){ .failure = "no ACPI PM timer in the FADT" };
    struct pm_timer_window pm = { pm_timer_read(), ACPI_PM_TIMER_HZ / 1000 * CALIBRATION_MS };
    return measure(pm_timer_over, &pm, "the ACPI PM timer does not count");
}

/* A window the host stretched -- a vCPU descheduled as the reference ran out, seen only when it ran again --
 * counts more cycles than the window held, never fewer: of CALIBRATION_WINDOWS windows the one with the fewest
 * is the truest. (One stretched window on a loaded host calibrated the TSC at 4444 MHz for 2135, and the
 * kernel's clock ran at half speed for its whole life.) */
#define CALIBRATION_WINDOWS 5

static struct window fewest_cycles(struct window (*one)(void))
{
    struct window best = one();
    for (int i = 1; i < CALIBRATION_WINDOWS && !best.failure; i++) {
        struct window w = one();
        if (!w.failure && w.tsc < best.tsc)
            best = w;
    }
    return best;
}

/* The LAPIC timer against a TSC whose rate is known: the last resort's window. */
static uint32_t lapic_over_tsc_window(uint64_t tsc_cycles)
{
    lapic_timer_calibrate_start();
    uint64_t t0 = rdtsc();
    while (rdtsc() - t0 < tsc_cycles)
        pause();
    return lapic_timer_calibrate_read();
}

static uint64_t cpuid_stated_tsc_hz(void)
{
    uint32_t leaf0[4], leaf15[4] = {0}, leaf16[4] = {0};
    cpuid(0, 0, leaf0);
    if (leaf0[0] >= 0x15)
        cpuid(0x15, 0, leaf15);
    if (leaf0[0] >= 0x16)
        cpuid(0x16, 0, leaf16);
    return cpuid_tsc_hz(leaf0[0], leaf15, leaf16);
}

void time_init(void)
{
    tsc_boot = rdtsc();
    struct window w = fewest_cycles(window_pit);
    pit_works = !w.failure;
    const char *pit_failure = w.failure, *pm_failure = NULL, *reference = "PIT channel 2";
    if (w.failure) {
        w = fewest_cycles(window_pm_timer);
        pm_failure = w.failure;
        reference = "the ACPI PM timer";
    }
    if (w.failure) {
        uint64_t stated = cpuid_stated_tsc_hz();
        reference = "the rate CPUID 0x15/0x16 states";
        if (!stated) {
            stated = ASSUMED_TSC_HZ;
            reference = NULL;
        }
        w.tsc = stated / 1000 * CALIBRATION_MS;
        w.lapic = lapic_over_tsc_window(w.tsc);
    }

    tsc_per_ms = w.tsc / CALIBRATION_MS;
    if (tsc_per_ms == 0)
        tsc_per_ms = 1;
    ns_mult = (1000000ull << 32) / tsc_per_ms;
    lapic_ticks_per_ms = w.lapic / CALIBRATION_MS;
    if (lapic_ticks_per_ms == 0)
        lapic_ticks_per_ms = 1;

    unsigned tsc_mhz = (unsigned)(tsc_per_ms / 1000);
    if (!pit_failure)
        log_info("time: TSC %u MHz, measured against PIT channel 2", tsc_mhz);
    else if (!pm_failure)
        log_warn("time: %s: TSC %u MHz, measured against %s", pit_failure, tsc_mhz, reference);
    else if (reference)
        log_warn("time: %s; %s: TSC %u MHz, %s", pit_failure, pm_failure, tsc_mhz, reference);
    else
        log_warn("time: %s; %s; CPUID states no TSC rate: assuming %u MHz, so times and rates are wrong",
                 pit_failure, pm_failure, tsc_mhz);
}

void tick_set_hz(unsigned rate)
{
    if (rate >= TICK_HZ_MIN && rate <= TICK_HZ_MAX)
        hz = rate;
}

unsigned tick_hz(void) { return hz; }

void time_start_tick(void)
{
    lapic_timer_start((uint32_t)((uint64_t)lapic_ticks_per_ms * 1000 / hz)); /* LAPIC timer counts per tick */
}

DEBUGGER_TEXT uint64_t cycles(void) { return rdtsc(); }
DEBUGGER_TEXT uint64_t cycles_per_ms(void) { return tsc_per_ms; }

DEBUGGER_TEXT int64_t time_ns(void)
{
    /* Signed: a CPU whose TSC lags the boot CPU's by a few cycles reads 0, not 584 years. */
    int64_t delta = (int64_t)(rdtsc() - tsc_boot);
    if (delta < 0)
        return 0;
    return (int64_t)(((unsigned __int128)(uint64_t)delta * ns_mult) >> 32);
}

void delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_per_ms / 1000;
    while ((int64_t)(rdtsc() - end) < 0)
        pause();
}

uint32_t time_lapic_ticks_per_ms(void) { return lapic_ticks_per_ms; }
