/* kernel/net/boot_secret.h: the secret a keyed service draws once at boot -- the UDP shell's token secret and
 * the gdb transport's nonce secret -- from the processor's entropy and the key. */
#ifndef KERNEL_NET_BOOT_SECRET_H
#define KERNEL_NET_BOOT_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"

/* SHA-256 of 64 entropy samples (each followed by a spin of its own low bits, so TSC jitter adds up), then
 * domain (which keeps two services' secrets apart) and the key (so a machine whose only entropy is TSC
 * jitter still has a secret nobody can predict once it is keyed). Returns whether any sample came from a
 * hardware random generator. Task context, once per service. */
bool boot_secret_derive(const char *domain, const uint8_t *key, size_t key_len, uint8_t secret[SHA256_DIGEST_SIZE]);

#endif
