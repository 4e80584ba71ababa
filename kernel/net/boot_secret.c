/* kernel/net/boot_secret.c: a keyed service's set-up at boot (kernel/net/boot_secret.h) -- udpsh.key= read
 * and the service's secret drawn from the processor's entropy and the key. */
#include "kernel/net/boot_secret.h"

#include "hal/cpu.h"
#include "hal/entropy.h"
#include "kernel/cmdline.h"
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

void keyed_boot_draw(const char *domain, struct keyed_boot *b)
{
    memset(b, 0, sizeof *b);
    const char *key_opt = cmdline_get("udpsh.key");
    if (key_opt && !keyed_key_parse(key_opt, b->key, &b->key_len, b->key_error, sizeof b->key_error)) {
        b->key_refused = true;
        b->key_len = 0;
    }
    b->hardware = boot_secret_derive(domain, b->key, b->key_len, b->secret);
}
