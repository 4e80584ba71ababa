/* kernel/httpd/http_token.c: the pprof.http= bearer token (kernel/httpd/http_token.h). */
#include "kernel/httpd/http_token.h"

#include "kernel/lib/hex.h"
#include "kernel/lib/hmac.h"
#include "kernel/lib/string.h"

void http_token_derive(const uint8_t *key, size_t key_len, char out[HTTP_TOKEN_HEX + 1])
{
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(key, key_len, HTTP_TOKEN_LABEL, strlen(HTTP_TOKEN_LABEL), mac);
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
        out[2 * i] = hex_lower(mac[i] >> 4);
        out[2 * i + 1] = hex_lower(mac[i]);
    }
    out[HTTP_TOKEN_HEX] = 0;
    memset(mac, 0, sizeof mac);
}

bool http_token_matches(const char expected[HTTP_TOKEN_HEX + 1], const char *given)
{
    /* The length is no secret (every token has 64 digits); the digits are compared in constant time. */
    if (strnlen(given, HTTP_TOKEN_HEX + 1) != HTTP_TOKEN_HEX)
        return false;
    return equal_in_constant_time(expected, given, HTTP_TOKEN_HEX);
}
