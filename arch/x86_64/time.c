/* arch/x86_64/time.c: the kernel's one clock and its tick. The TSC is calibrated against PIT channel 2 (a
 * gate-driven one-shot whose rate, 1.193182 MHz, is the one fixed frequency every PC has), and the LAPIC
 * timer against the same window; then time_ns() is a multiply and a shift of the TSC, and every CPU runs
 * its LAPIC timer periodically at tick_hz() (TICK_HZ_DEFAULT, or profile.hz= from the command line). */
#include "hal/compiler.h"
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"

#define PIT_HZ 1193182u
#define CALIBRATION_MS 20u

static uint64_t tsc_boot;
static uint64_t tsc_per_ms;
static uint64_t ns_mult;   /* ns = (tsc_delta * ns_mult) >> 32 */
static uint32_t lapic_ticks_per_ms;
static unsigned hz = TICK_HZ_DEFAULT;

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

void time_init(void)
{
    pit2_arm(PIT_HZ * CALIBRATION_MS / 1000);
    lapic_timer_calibrate_start();
    uint64_t t0 = rdtsc();
    while (!pit2_expired())
        pause();
    uint64_t t1 = rdtsc();
    uint32_t lapic_elapsed = lapic_timer_calibrate_read();

    tsc_per_ms = (t1 - t0) / CALIBRATION_MS;
    if (tsc_per_ms == 0)
        tsc_per_ms = 1;
    ns_mult = (1000000ull << 32) / tsc_per_ms;
    lapic_ticks_per_ms = lapic_elapsed / CALIBRATION_MS;
    if (lapic_ticks_per_ms == 0)
        lapic_ticks_per_ms = 1;
    tsc_boot = t0;
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
