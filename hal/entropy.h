/* hal/entropy.h: what unpredictability the processor offers, for secrets made at boot (the UDP shell's token
 * key, kernel/udpsh/udpsh.c). Raw material, not a random-number generator: the caller mixes many samples
 * through a hash. */
#ifndef HAL_ENTROPY_H
#define HAL_ENTROPY_H

#include <stdbool.h>
#include <stdint.h>

/* One 64-bit sample: the CPU's hardware generator (RDRAND on x86) XORed with the cycle counter read around
 * it, or the cycle counter alone when there is no generator or it keeps failing. *hardware says which. */
uint64_t entropy_sample(bool *hardware);

#endif
