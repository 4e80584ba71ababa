/* kernel/httpd/http_token.h: the bearer token the pprof.http= server asks for when udpsh.key= is set -- the
 * lowercase hex of HMAC-SHA256(key, HTTP_TOKEN_LABEL), what `scripts/udpsh --key KEY pprof-token` prints for a
 * scraper's configuration -- and its constant-time check. Pure, for the unit tests. */
#ifndef KERNEL_HTTPD_HTTP_TOKEN_H
#define KERNEL_HTTPD_HTTP_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"

#define HTTP_TOKEN_LABEL "kprof pprof.http bearer v1"
#define HTTP_TOKEN_HEX (2 * SHA256_DIGEST_SIZE) /* 64 hex digits */

/* out gets HTTP_TOKEN_HEX lowercase hex digits and a NUL. */
void http_token_derive(const uint8_t *key, size_t key_len, char out[HTTP_TOKEN_HEX + 1]);

/* Whether given (NUL-terminated, any length) is the token, in a time that does not depend on where they
 * differ. */
bool http_token_matches(const char expected[HTTP_TOKEN_HEX + 1], const char *given);

#endif
