/* kernel/lib/hmac.c: HMAC-SHA-256, H((K ^ opad) || H((K ^ ipad) || message)) with the key zero-padded to one
 * block (RFC 2104 section 2), and the constant-time comparison used to check one. */
#include "kernel/lib/hmac.h"

#include "kernel/lib/string.h"

void hmac_sha256_init(struct hmac_sha256 *h, const void *key, size_t key_len)
{
    uint8_t block_key[SHA256_BLOCK_SIZE] = { 0 };
    if (key_len > SHA256_BLOCK_SIZE)
        sha256(key, key_len, block_key);
    else
        memcpy(block_key, key, key_len);
    uint8_t inner_pad[SHA256_BLOCK_SIZE];
    for (int i = 0; i < SHA256_BLOCK_SIZE; i++) {
        inner_pad[i] = block_key[i] ^ 0x36;
        h->outer_pad[i] = block_key[i] ^ 0x5c;
    }
    sha256_init(&h->inner);
    sha256_update(&h->inner, inner_pad, sizeof inner_pad);
    memset(block_key, 0, sizeof block_key);
    memset(inner_pad, 0, sizeof inner_pad);
}

void hmac_sha256_update(struct hmac_sha256 *h, const void *data, size_t len)
{
    sha256_update(&h->inner, data, len);
}

void hmac_sha256_final(struct hmac_sha256 *h, uint8_t mac[SHA256_DIGEST_SIZE])
{
    uint8_t inner_digest[SHA256_DIGEST_SIZE];
    sha256_final(&h->inner, inner_digest);
    struct sha256 outer;
    sha256_init(&outer);
    sha256_update(&outer, h->outer_pad, sizeof h->outer_pad);
    sha256_update(&outer, inner_digest, sizeof inner_digest);
    sha256_final(&outer, mac);
    memset(h, 0, sizeof *h);
}

void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len, uint8_t mac[SHA256_DIGEST_SIZE])
{
    struct hmac_sha256 h;
    hmac_sha256_init(&h, key, key_len);
    hmac_sha256_update(&h, data, len);
    hmac_sha256_final(&h, mac);
}

bool equal_in_constant_time(const void *a, const void *b, size_t len)
{
    /* volatile: the compiler may not turn the accumulation into an early exit. */
    const volatile uint8_t *x = a, *y = b;
    uint8_t difference = 0;
    for (size_t i = 0; i < len; i++)
        difference |= x[i] ^ y[i];
    return difference == 0;
}
