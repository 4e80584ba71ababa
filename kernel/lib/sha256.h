/* kernel/lib/sha256.h: SHA-256 (FIPS 180-4), fed in pieces, for the UDP shell's tokens and request MACs
 * (kernel/lib/hmac.h). Pure and allocation-free, so the host unit tests check it against the published
 * examples.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_SHA256_H
#define KERNEL_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

struct sha256 {
    uint32_t state[8];
    uint64_t length;  /* bytes fed so far */
    size_t pending;   /* bytes waiting in block */
    uint8_t block[SHA256_BLOCK_SIZE];
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Pads, writes the digest and leaves *s to be initialised again. */
void sha256_final(struct sha256 *s, uint8_t digest[SHA256_DIGEST_SIZE]);

/* The digest of one buffer. */
void sha256(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_SIZE]);

#endif
