/* kernel/net/entropy_pool.h: the boot's entropy pool -- samples from a source (hal/entropy.h on the kernel, a
 * fake in tests/unit/test_entropy_pool.c) mixed through SHA-256 into one seed, with a conservative estimate of
 * what went in; from the seed, each keyed service's secret and the stream's run ids. Portable: it never reads
 * the machine itself. kernel/net/boot_secret.c gathers the kernel's one pool. */
#ifndef KERNEL_NET_ENTROPY_POOL_H
#define KERNEL_NET_ENTROPY_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/entropy.h"
#include "kernel/lib/sha256.h"

#define ENTROPY_STRONG_BITS 128     /* under this estimate the pool is weak */
#define ENTROPY_HARDWARE_SAMPLES 8  /* 64-bit hardware values gathered */
#define ENTROPY_HARDWARE_RETRIES 10 /* tries per value before the generator counts as failing */
#define ENTROPY_TIMING_READINGS 64  /* readings per timing */
#define ENTROPY_BITS_PER_READING 2  /* the most one timing reading is credited */

/* Where the samples come from: hal/entropy.h's functions, or a test's fakes. */
struct entropy_source {
    bool (*hardware_present)(void);
    bool (*hardware_read)(uint64_t *out);
    size_t (*timing_read)(enum entropy_timing which, uint64_t *out, size_t cap);
};

/* What became of the hardware generator. A stuck one (the AMD parts that, after a resume, answer RDRAND with all
 * ones and the carry set) reports success every time: only its values give it away. */
enum entropy_hardware_verdict {
    ENTROPY_HARDWARE_MISSING,   /* the processor offers none */
    ENTROPY_HARDWARE_WORKING,   /* every value came, none of them suspect: counted on */
    ENTROPY_HARDWARE_FAILING,   /* a value never came through the bounded retries (the carry flag stayed clear) */
    ENTROPY_HARDWARE_ALL_ZEROS, /* refused: a value of all zero bits */
    ENTROPY_HARDWARE_ALL_ONES,  /* refused: a value of all one bits */
    ENTROPY_HARDWARE_REPEATS,   /* refused: a value it had given before */
};

struct entropy_pool {
    uint8_t seed[SHA256_DIGEST_SIZE];
    bool hardware_present;  /* the processor says it has a generator */
    bool hardware;          /* ... and it is counted on (verdict WORKING); else the timings alone are credited */
    enum entropy_hardware_verdict verdict;
    unsigned estimate_bits; /* conservative: see entropy_estimate_bits */
    atomic_uint run_ids;    /* run ids handed out (entropy_pool_run_id) */
};

/* Bits credited to a series of readings (durations): for each reading from the third on, the smaller of how far
 * it strays from the one before (first difference) and how far that straying differs from the previous one
 * (second difference), as the bit length of that smaller value less one, at most ENTROPY_BITS_PER_READING. A
 * constant series, or one that moves by a constant step, earns nothing; a wandering one earns at most 2 bits a
 * reading however wide it wanders, since a wide spread may come from something an observer can also see. */
unsigned entropy_estimate_bits(const uint64_t *readings, size_t n);

/* Gathers the pool: ENTROPY_HARDWARE_SAMPLES values from the hardware generator when present (each retried up
 * to ENTROPY_HARDWARE_RETRIES times; one that never comes makes the generator count as failing), 64 bits each
 * -- unless a value is all zeros, all ones or one it gave before, which refuses the generator (nothing of it
 * credited, no more read); and always ENTROPY_TIMING_READINGS readings of each timing, credited by
 * entropy_estimate_bits (the wall clock earns nothing: it is not secret), so a generator that misleads in a
 * way no check here sees still leaves the seed differing from boot to boot. Everything read is hashed into
 * seed. Task context, once: up to about a second (the RTC's edge). */
void entropy_pool_gather(struct entropy_pool *pool, const struct entropy_source *src);

/* Whether the pool is weak: no hardware generator that worked, or an estimate under ENTROPY_STRONG_BITS. */
bool entropy_pool_weak(const struct entropy_pool *pool);

/* Why the hardware generator is not counted on, for the boot's warning and `net` (no parenthesis in it):
 * "no RDRAND/RDSEED", "RDRAND/RDSEED failing", "RDRAND/RDSEED refused: it returned all ones" (all zeros, the
 * same value twice); "" when it is. */
const char *entropy_pool_hardware_why(const struct entropy_pool *pool);

/* A service's secret: SHA-256 of the seed, fresh (anything the caller read just now, e.g. the cycle counter),
 * domain (which keeps two services' secrets apart) and the key (so a keyed machine's secret stays unknown to
 * whoever lacks the key, however weak the pool). */
void entropy_pool_derive(const struct entropy_pool *pool, uint64_t fresh, const char *domain, const uint8_t *key,
                         size_t key_len, uint8_t secret[SHA256_DIGEST_SIZE]);

/* The next stream run id: HMAC-SHA-256 keyed by the seed over "run id" and a counter, its first 4 bytes. No
 * clock goes in, so an id tells its reader nothing of the machine's time or cycle counter. Any context. */
uint32_t entropy_pool_run_id(struct entropy_pool *pool);

#endif
