/* arch/x86_64/entropy.c: hal/entropy.h's hardware generator and tick pool on x86_64 -- RDSEED and RDRAND where
 * CPUID offers them (leaf 7 EBX bit 18, leaf 1 ECX bit 30; QEMU's TCG offers RDRAND on -cpu max, its default
 * CPU neither), and the cycle counter at the first timer interrupts of the boot. The PIT and RTC timings are
 * arch/x86_64/entropy_timing.c. */
#include "hal/entropy.h"

#include <stdatomic.h>

#include "arch/x86_64/x86.h"

static int has_rdrand = -1, has_rdseed = -1;

static void probe(void)
{
    if (has_rdrand >= 0)
        return;
    uint32_t r[4];
    cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    cpuid(1, 0, r);
    int rdrand = (r[2] >> 30) & 1;
    int rdseed = 0;
    if (max_leaf >= 7) {
        cpuid(7, 0, r);
        rdseed = (r[1] >> 18) & 1;
    }
    has_rdseed = rdseed;
    has_rdrand = rdrand;
}

bool entropy_hardware_present(void)
{
    probe();
    return has_rdrand || has_rdseed;
}

bool entropy_hardware_read(uint64_t *out)
{
    probe();
    uint64_t value;
    uint8_t ok = 0;
    /* RDSEED first: its output is the conditioned noise itself, RDRAND's a generator reseeded from it. Either
     * may clear the carry flag (no value ready); the caller's bounded retry decides when to give up. */
    if (has_rdseed) {
        __asm__ volatile("rdseed %0; setc %1" : "=r"(value), "=qm"(ok) : : "cc");
        if (ok) {
            *out = value;
            return true;
        }
    }
    if (has_rdrand) {
        __asm__ volatile("rdrand %0; setc %1" : "=r"(value), "=qm"(ok) : : "cc");
        if (ok) {
            *out = value;
            return true;
        }
    }
    return false;
}

/* The first TICK_POOL ticks of the boot, from whichever CPUs had them: a slot is claimed by one atomic add,
 * so two CPUs never write the same one; once full, a tick costs one relaxed load. */
#define TICK_POOL 64

static _Atomic uint64_t tick_cycles[TICK_POOL];
static atomic_uint ticks_claimed;

void entropy_tick(void)
{
    if (atomic_load_explicit(&ticks_claimed, memory_order_relaxed) >= TICK_POOL)
        return;
    unsigned slot = atomic_fetch_add_explicit(&ticks_claimed, 1, memory_order_relaxed);
    if (slot < TICK_POOL)
        atomic_store_explicit(&tick_cycles[slot], rdtsc(), memory_order_relaxed);
}

size_t entropy_tick_intervals(uint64_t *out, size_t cap)
{
    unsigned claimed = atomic_load_explicit(&ticks_claimed, memory_order_relaxed);
    size_t n = 0;
    uint64_t last = 0;
    for (unsigned i = 0; i < claimed && i < TICK_POOL && n < cap; i++) {
        uint64_t at = atomic_load_explicit(&tick_cycles[i], memory_order_relaxed);
        if (at == 0)
            continue; /* claimed, not yet written */
        if (last)
            out[n++] = at - last;
        last = at;
    }
    return n;
}
