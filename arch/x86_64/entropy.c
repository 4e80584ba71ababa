/* arch/x86_64/entropy.c: hal/entropy.h on x86_64 -- RDRAND when CPUID leaf 1 says the CPU has it (ECX bit 30;
 * QEMU's TCG offers it on -cpu max), retried as Intel's guidance says, XORed with the TSC, whose low bits
 * jitter from one read to the next with interrupts, caches and the host's scheduling. */
#include "hal/entropy.h"

#include "arch/x86_64/x86.h"

#define RDRAND_RETRIES 10

static bool has_rdrand(void)
{
    static int known = -1;
    if (known < 0) {
        uint32_t r[4];
        cpuid(1, 0, r);
        known = (r[2] >> 30) & 1;
    }
    return known;
}

static bool rdrand64(uint64_t *out)
{
    for (int i = 0; i < RDRAND_RETRIES; i++) {
        uint64_t value;
        uint8_t ok;
        __asm__ volatile("rdrand %0; setc %1" : "=r"(value), "=qm"(ok) : : "cc");
        if (ok) {
            *out = value;
            return true;
        }
    }
    return false;
}

uint64_t entropy_sample(bool *hardware)
{
    uint64_t sample = rdtsc();
    uint64_t value = 0;
    *hardware = has_rdrand() && rdrand64(&value);
    /* The TSC after as well as before: how long RDRAND (or nothing) took is itself jitter. */
    return sample ^ value ^ (rdtsc() << 32);
}
