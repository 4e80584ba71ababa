/* tests/unit/udpsh_requests.h: UDP shell requests built the way a client builds them (scripts/kprof_wire.py), for
 * the unit tests of kernel/udpsh/auth.c: the token of an address and port in hex, and a keyed request. */
#ifndef TESTS_UNIT_UDPSH_REQUESTS_H
#define TESTS_UNIT_UDPSH_REQUESTS_H

#include <stdio.h>
#include <string.h>

#include "kernel/lib/hmac.h"
#include "kernel/udpsh/auth.h"

static inline void udpsh_token_hex(const struct udpsh_auth *a, uint32_t ip, uint16_t port, int64_t window,
                                   char hex[UDPSH_TOKEN_HEX + 1])
{
    uint8_t token[UDPSH_TOKEN_BYTES];
    udpsh_token(a, ip, port, window, token);
    for (int i = 0; i < UDPSH_TOKEN_BYTES; i++)
        sprintf(hex + 2 * i, "%02x", token[i]);
}

/* "token=<ip:port's token in window> counter=<counter> mac=<HMAC(key, "<token> <counter> <line>")> <line>" */
static inline void udpsh_keyed_datagram(const struct udpsh_auth *a, const uint8_t *key, size_t key_len, uint32_t ip,
                                        uint16_t port, int64_t window, uint64_t counter, const char *line, char *out,
                                        size_t cap)
{
    char tok[UDPSH_TOKEN_HEX + 1], mac_hex[UDPSH_MAC_HEX + 1], msg[512];
    udpsh_token_hex(a, ip, port, window, tok);
    snprintf(msg, sizeof msg, "%s %llu %s", tok, (unsigned long long)counter, line);
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(key, key_len, msg, strlen(msg), mac);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        sprintf(mac_hex + 2 * i, "%02x", mac[i]);
    snprintf(out, cap, "token=%s counter=%llu mac=%s %s", tok, (unsigned long long)counter, mac_hex, line);
}

#endif
