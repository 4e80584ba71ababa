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

void entropy_pool_gather(struct entropy_pool *pool, const struct entropy_source *src)
{
    struct sha256 mix;
    sha256_init(&mix);
    sha256_update(&mix, "kprof entropy pool", 18);
    pool->hardware_present = src->hardware_present();
    pool->hardware = pool->hardware_present;
    pool->estimate_bits = 0;
    atomic_store(&pool->run_ids, 0);
    for (int i = 0; pool->hardware && i < ENTROPY_HARDWARE_SAMPLES; i++) {
        uint64_t value = 0;
        if (hardware_value(src, &value)) {
            sha256_update(&mix, &value, sizeof value);
            pool->estimate_bits += 64;
        } else {
            pool->hardware = false; /* failing: what it gave stays mixed in, but is not counted on */
            pool->estimate_bits = 0;
        }
    }
    /* The timings only when the generator is missing or failing: the RTC's edge costs up to a second. */
    for (int which = 0; !pool->hardware && which < ENTROPY_TIMINGS; which++) {
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
