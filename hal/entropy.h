/* hal/entropy.h: what unpredictability the machine offers, for the secrets made at boot (the boot entropy pool,
 * kernel/net/entropy_pool.h, and from it the UDP shell's token key, the gdb transport's nonce secret and the
 * stream's run ids). Raw material, not a random-number generator: the pool mixes it through SHA-256 and
 * estimates what it is worth. */
#ifndef HAL_ENTROPY_H
#define HAL_ENTROPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the processor says it has a hardware generator (RDSEED or RDRAND on x86). */
bool entropy_hardware_present(void);

/* One try at the hardware generator (RDSEED, then RDRAND if RDSEED had nothing): false when there is none or
 * it reported failure (the carry flag clear). The caller retries a bounded number of times. */
bool entropy_hardware_read(uint64_t *out);

/* The independent timings a machine without a hardware generator falls back on. Each reading is a duration
 * in cycles (or, for the wall clock, the clock's own fields) whose low bits wander with what the cycle counter
 * cannot predict. */
enum entropy_timing {
    ENTROPY_PIT,      /* cycles across short one-shots of the PIT (a crystal of its own), or the ACPI PM timer */
    ENTROPY_RTC,      /* cycles from a start until the RTC's seconds edge (the RTC follows the host's clock) */
    ENTROPY_TICKS,    /* cycles between timer interrupts seen so far (their arrival jitter), any CPU */
    ENTROPY_WALLCLOCK,/* the RTC's date and time, one reading: it differs every boot, it is not secret */
    ENTROPY_TIMINGS
};

/* Fills out[0..cap) with readings of one timing; returns how many (0: not available). Task context: the PIT
 * and RTC readings take from a few ms to just over one second (the RTC's edge). */
size_t entropy_timing_read(enum entropy_timing which, uint64_t *out, size_t cap);

/* Every CPU's timer interrupt: keeps the cycle counter's value in a small per-boot pool (the first few dozen
 * ticks; nothing after that but one load). Interrupt context: no locks. */
void entropy_tick(void);

#endif
