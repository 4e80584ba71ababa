/* kernel/net/entropy_pool.c: the boot's entropy pool (kernel/net/entropy_pool.h) -- gathering through a
 * source, the estimate, and what is derived from the seed. */
#include "kernel/net/entropy_pool.h"

#include "kernel/lib/hmac.h"
#include "kernel/lib/string.h"

static uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

static unsigned bit_length(uint64_t v)
{
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

unsigned entropy_estimate_bits(const uint64_t *readings, size_t n)
{
    unsigned bits = 0;
    for (size_t i = 2; i < n; i++) {
        uint64_t first = distance(readings[i], readings[i - 1]);
        uint64_t before = distance(readings[i - 1], readings[i - 2]);
        uint64_t second = distance(first, before);
        uint64_t least = first < second ? first : second;
        unsigned credit = least ? bit_length(least) - 1 : 0;
        bits += credit < ENTROPY_BITS_PER_READING ? credit : ENTROPY_BITS_PER_READING;
    }
    return bits;
}

static bool hardware_value(const struct entropy_source *src, uint64_t *out)
{
    for (int i = 0; i < ENTROPY_HARDWARE_RETRIES; i++)
        if (src->hardware_read(out))
            return true;
    return false;
}

/* A value a working generator gives once in 2^64 draws: all zeros, all ones, or one of the earlier values. */
static enum entropy_hardware_verdict suspect(uint64_t value, const uint64_t *earlier, int n)
{
    if (value == 0)
        return ENTROPY_HARDWARE_ALL_ZEROS;
    if (value == ~(uint64_t)0)
        return ENTROPY_HARDWARE_ALL_ONES;
    for (int i = 0; i < n; i++)
        if (earlier[i] == value)
            return ENTROPY_HARDWARE_REPEATS;
    return ENTROPY_HARDWARE_WORKING;
}

/* The generator's values into mix; its verdict. What a failing or refused generator gave stays mixed in (it
 * can only add to the seed) but is not credited. */
static enum entropy_hardware_verdict gather_hardware(struct sha256 *mix, const struct entropy_source *src)
{
    uint64_t values[ENTROPY_HARDWARE_SAMPLES];
    for (int i = 0; i < ENTROPY_HARDWARE_SAMPLES; i++) {
        if (!hardware_value(src, &values[i]))
            return ENTROPY_HARDWARE_FAILING;
        sha256_update(mix, &values[i], sizeof values[i]);
        enum entropy_hardware_verdict verdict = suspect(values[i], values, i);
        if (verdict != ENTROPY_HARDWARE_WORKING)
            return verdict;
    }
    return ENTROPY_HARDWARE_WORKING;
}

void entropy_pool_gather(struct entropy_pool *pool, const struct entropy_source *src)
{
    struct sha256 mix;
    sha256_init(&mix);
    sha256_update(&mix, "kprof entropy pool", 18);
    pool->hardware_present = src->hardware_present();
    pool->verdict = pool->hardware_present ? gather_hardware(&mix, src) : ENTROPY_HARDWARE_MISSING;
    pool->hardware = pool->verdict == ENTROPY_HARDWARE_WORKING;
    pool->estimate_bits = pool->hardware ? 64 * ENTROPY_HARDWARE_SAMPLES : 0;
    atomic_store(&pool->run_ids, 0);
    /* The timings always, a working generator or not: a generator can mislead in ways no check here sees (the
     * same values every boot), and the timings keep the seed differing then. */
    for (int which = 0; which < ENTROPY_TIMINGS; which++) {
        uint64_t readings[ENTROPY_TIMING_READINGS];
        size_t n = src->timing_read((enum entropy_timing)which, readings, ENTROPY_TIMING_READINGS);
        if (n > ENTROPY_TIMING_READINGS)
            n = ENTROPY_TIMING_READINGS;
        uint64_t header[2] = { (uint64_t)which, n };
        sha256_update(&mix, header, sizeof header);
        sha256_update(&mix, readings, n * sizeof readings[0]);
        if (which != ENTROPY_WALLCLOCK)
            pool->estimate_bits += entropy_estimate_bits(readings, n);
    }
    sha256_final(&mix, pool->seed);
}

bool entropy_pool_weak(const struct entropy_pool *pool)
{
    return !pool->hardware || pool->estimate_bits < ENTROPY_STRONG_BITS;
}

const char *entropy_pool_hardware_why(const struct entropy_pool *pool)
{
    switch (pool->verdict) {
    case ENTROPY_HARDWARE_MISSING: return "no RDRAND/RDSEED";
    case ENTROPY_HARDWARE_FAILING: return "RDRAND/RDSEED failing";
    case ENTROPY_HARDWARE_ALL_ZEROS: return "RDRAND/RDSEED refused: it returned all zeros";
    case ENTROPY_HARDWARE_ALL_ONES: return "RDRAND/RDSEED refused: it returned all ones";
    case ENTROPY_HARDWARE_REPEATS: return "RDRAND/RDSEED refused: it returned the same value twice";
    default: return "";
    }
}

void entropy_pool_derive(const struct entropy_pool *pool, uint64_t fresh, const char *domain, const uint8_t *key,
                         size_t key_len, uint8_t secret[SHA256_DIGEST_SIZE])
{
    struct sha256 mix;
    sha256_init(&mix);
    sha256_update(&mix, pool->seed, sizeof pool->seed);
    sha256_update(&mix, &fresh, sizeof fresh);
    sha256_update(&mix, domain, strlen(domain));
    sha256_update(&mix, key, key_len);
    sha256_final(&mix, secret);
}

uint32_t entropy_pool_run_id(struct entropy_pool *pool)
{
    uint8_t message[6 + 4] = { 'r', 'u', 'n', ' ', 'i', 'd' };
    uint32_t counter = atomic_fetch_add(&pool->run_ids, 1);
    memcpy(message + 6, &counter, sizeof counter);
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(pool->seed, sizeof pool->seed, message, sizeof message, mac);
    uint32_t id;
    memcpy(&id, mac, sizeof id);
    return id;
}
