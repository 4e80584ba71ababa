/* tests/unit/test_sha256.c: kernel/lib/sha256.c and kernel/lib/hmac.c against the published vectors -- the
 * FIPS 180-4 examples ("abc", the 448-bit message, one million 'a's) and RFC 4231's HMAC-SHA-256 test cases 1
 * to 7 -- fed whole and in every split, across block boundaries, and the constant-time comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/hmac.h"
#include "kernel/lib/sha256.h"
#include "unit_main.h"

static void to_hex(const uint8_t *bytes, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        sprintf(out + 2 * i, "%02x", bytes[i]);
}

static void assert_digest(const uint8_t digest[32], size_t len, const char *want)
{
    char hex[65];
    to_hex(digest, len, hex);
    assert_string_equal(hex, want);
}

static void assert_sha256(const void *data, size_t len, const char *want)
{
    uint8_t digest[32];
    sha256(data, len, digest);
    assert_digest(digest, 32, want);
    /* the same in two pieces split at every point */
    for (size_t cut = 0; cut <= len && len < 200; cut++) {
        struct sha256 s;
        sha256_init(&s);
        sha256_update(&s, data, cut);
        sha256_update(&s, (const uint8_t *)data + cut, len - cut);
        sha256_final(&s, digest);
        assert_digest(digest, 32, want);
    }
}

static void test_fips_abc(void **state)
{
    (void)state;
    assert_sha256("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_fips_448_bits(void **state)
{
    (void)state;
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(strlen(m) * 8, 448);
    assert_sha256(m, strlen(m), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_fips_a_million_a(void **state)
{
    (void)state;
    /* fed in uneven pieces, so that buffering across blocks is exercised too */
    static uint8_t a[1024]; /* more than the largest piece */
    memset(a, 'a', sizeof a);
    struct sha256 s;
    sha256_init(&s);
    size_t fed = 0, piece = 1;
    while (fed < 1000000) {
        size_t n = piece < 1000000 - fed ? piece : 1000000 - fed;
        sha256_update(&s, a, n);
        fed += n;
        piece = piece % 997 + 13;
    }
    uint8_t digest[32];
    sha256_final(&s, digest);
    assert_digest(digest, 32, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_empty_and_padding_edges(void **state)
{
    (void)state;
    assert_sha256("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    /* 55 bytes fit the length in the same block, 56 need another; 64 fill one exactly */
    static const struct { size_t len; const char *want; } edges[] = {
        { 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
        { 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
        { 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
    };
    uint8_t a[64];
    memset(a, 'a', sizeof a);
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        assert_sha256(a, edges[i].len, edges[i].want);
}

struct rfc4231_case {
    uint8_t key[131];
    size_t key_len;
    const char *data;
    size_t data_len;
    size_t mac_len; /* test case 5 is truncated to 128 bits */
    const char *mac;
};

static void fill(uint8_t *p, uint8_t v, size_t n) { memset(p, v, n); }

static void test_rfc4231(void **state)
{
    (void)state;
    static uint8_t dd[50], cd[50];
    fill(dd, 0xdd, sizeof dd);
    fill(cd, 0xcd, sizeof cd);
    struct rfc4231_case cases[7] = {
        { .key_len = 20, .data = "Hi There", .data_len = 8, .mac_len = 32,
          .mac = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
        { .key = "Jefe", .key_len = 4, .data = "what do ya want for nothing?", .data_len = 28, .mac_len = 32,
          .mac = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
        { .key_len = 20, .data = (const char *)dd, .data_len = 50, .mac_len = 32,
          .mac = "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
        { .key_len = 25, .data = (const char *)cd, .data_len = 50, .mac_len = 32,
          .mac = "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
        { .key_len = 20, .data = "Test With Truncation", .data_len = 20, .mac_len = 16,
          .mac = "a3b6167473100ee06e0c796c2955552b" },
        { .key_len = 131, .data = "Test Using Larger Than Block-Size Key - Hash Key First", .data_len = 54,
          .mac_len = 32, .mac = "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
        { .key_len = 131,
          .data = "This is a test using a larger than block-size key and a larger than block-size data. The key "
                  "needs to be hashed before being used by the HMAC algorithm.",
          .data_len = 152, .mac_len = 32,
          .mac = "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
    };
    fill(cases[0].key, 0x0b, 20);
    fill(cases[2].key, 0xaa, 20);
    for (int i = 0; i < 25; i++)
        cases[3].key[i] = (uint8_t)(i + 1);
    fill(cases[4].key, 0x0c, 20);
    fill(cases[5].key, 0xaa, 131);
    fill(cases[6].key, 0xaa, 131);
    for (int i = 0; i < 7; i++) {
        const struct rfc4231_case *c = &cases[i];
        if (i != 2 && i != 3) /* the others are text; 2 and 3 are bytes without a NUL */
            assert_int_equal(strlen(c->data), c->data_len);
        uint8_t mac[32];
        hmac_sha256(c->key, c->key_len, c->data, c->data_len, mac);
        assert_digest(mac, c->mac_len, c->mac);
        /* and fed a byte at a time */
        struct hmac_sha256 h;
        hmac_sha256_init(&h, c->key, c->key_len);
        for (size_t j = 0; j < c->data_len; j++)
            hmac_sha256_update(&h, c->data + j, 1);
        hmac_sha256_final(&h, mac);
        assert_digest(mac, c->mac_len, c->mac);
    }
}

static void test_constant_time_equal(void **state)
{
    (void)state;
    uint8_t a[32], b[32];
    memset(a, 0x5a, sizeof a);
    memcpy(b, a, sizeof b);
    assert_true(equal_in_constant_time(a, b, 32));
    assert_true(equal_in_constant_time(a, b, 0));
    for (int i = 0; i < 32; i++)
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1 << bit);
            assert_false(equal_in_constant_time(a, b, 32));
            b[i] ^= (uint8_t)(1 << bit);
        }
}

UNIT_MAIN(NULL, NULL,
          test_fips_abc, test_fips_448_bits, test_fips_a_million_a, test_empty_and_padding_edges, test_rfc4231,
          test_constant_time_equal)
