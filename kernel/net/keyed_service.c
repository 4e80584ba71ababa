/* kernel/net/keyed_service.c: the key and boot secret a keyed UDP service holds, and the udpsh.key= grammar
 * (kernel/net/keyed_service.h), for the UDP shell and the gdb UDP transport alike. Pure; the set-up at boot
 * that feeds it is kernel/net/boot_secret.c. */
#include "kernel/net/keyed_service.h"

#include "kernel/lib/format.h"
#include "kernel/lib/hex.h"
#include "kernel/lib/string.h"

void keyed_service_init(struct keyed_service *s, const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key,
                        size_t key_len)
{
    memset(s, 0, sizeof *s);
    memcpy(s->secret, secret, SHA256_DIGEST_SIZE);
    if (key && key_len >= KEYED_KEY_MIN_BYTES && key_len <= KEYED_KEY_MAX_BYTES) {
        s->keyed = true;
        s->key_len = key_len;
        memcpy(s->key, key, key_len);
    }
}

bool keyed_key_parse(const char *text, uint8_t key[KEYED_KEY_MAX_BYTES], size_t *key_len, char *error,
                     size_t error_cap)
{
    size_t len = strlen(text);
    for (size_t i = 0; i < len; i++) {
        if (hex_value(text[i]) < 0) {
            ksnprintf(error, error_cap, "character %u is not a hex digit", (unsigned)(i + 1));
            return false;
        }
    }
    if (len % 2) {
        ksnprintf(error, error_cap, "an odd number of hex digits (%u)", (unsigned)len);
        return false;
    }
    if (len < 2 * KEYED_KEY_MIN_BYTES || len > 2 * KEYED_KEY_MAX_BYTES) {
        ksnprintf(error, error_cap, "%u bits; want %u to %u (%u to %u hex digits)", (unsigned)(len * 4),
                  KEYED_KEY_MIN_BYTES * 8, KEYED_KEY_MAX_BYTES * 8, 2 * KEYED_KEY_MIN_BYTES,
                  2 * KEYED_KEY_MAX_BYTES);
        return false;
    }
    for (size_t i = 0; i < len / 2; i++)
        key[i] = (uint8_t)(hex_value(text[2 * i]) << 4 | hex_value(text[2 * i + 1]));
    *key_len = len / 2;
    return true;
}
