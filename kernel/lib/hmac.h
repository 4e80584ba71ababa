/* kernel/lib/hmac.h: HMAC-SHA-256 (RFC 2104 over kernel/lib/sha256.h), fed in pieces, and the constant-time
 * comparison a MAC check needs (a comparison that stops at the first differing byte tells a forger, by its
 * time, how many leading bytes of a guess were right).
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_HMAC_H
#define KERNEL_LIB_HMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"

struct hmac_sha256 {
    struct sha256 inner;
    uint8_t outer_pad[SHA256_BLOCK_SIZE]; /* the key XOR 0x5c, kept for the final outer hash */
};

/* Any key length: a key longer than a block is hashed first, as RFC 2104 says. */
void hmac_sha256_init(struct hmac_sha256 *h, const void *key, size_t key_len);
void hmac_sha256_update(struct hmac_sha256 *h, const void *data, size_t len);
void hmac_sha256_final(struct hmac_sha256 *h, uint8_t mac[SHA256_DIGEST_SIZE]);

void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len, uint8_t mac[SHA256_DIGEST_SIZE]);

/* True when the len bytes at a and b are equal; takes the same time whatever they hold. */
bool equal_in_constant_time(const void *a, const void *b, size_t len);

#endif
