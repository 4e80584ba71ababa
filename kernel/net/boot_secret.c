/* kernel/net/boot_secret.c: a keyed service's boot secret (kernel/net/boot_secret.h). */
#include "kernel/net/boot_secret.h"

#include "hal/cpu.h"
#include "hal/entropy.h"
#include "kernel/lib/string.h"

bool boot_secret_derive(const char *domain, const uint8_t *key, size_t key_len, uint8_t secret[SHA256_DIGEST_SIZE])
{
    struct sha256 pool;
    sha256_init(&pool);
    bool hardware = false;
    for (int i = 0; i < 64; i++) {
        bool from_hardware;
        uint64_t sample = entropy_sample(&from_hardware);
        hardware |= from_hardware;
        sha256_update(&pool, &sample, sizeof sample);
        for (unsigned spin = (unsigned)sample & 63; spin > 0; spin--)
            cpu_relax();
    }
    sha256_update(&pool, domain, strlen(domain));
    sha256_update(&pool, key, key_len);
    sha256_final(&pool, secret);
    return hardware;
}
