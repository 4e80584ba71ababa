/* kernel/net/keyed_service.h: what the two services keyed by udpsh.key= share -- the UDP shell
 * (kernel/udpsh/auth.h) and the gdb UDP transport (gdbstub/udp_auth.h): the key option's grammar, and the key
 * and boot secret each holds (struct keyed_service). Their set-up at boot, which reads the option and draws
 * the secret, is kernel/net/boot_secret.h's keyed_boot_draw.
 *
 * Each service keeps its own copy: its secret is drawn under its own domain label, so neither's tokens or
 * nonces are the other's, and what it says and does about a key that cannot be used is its own (the shell refuses
 * every request with one line; the debugger takes no datagram at all). Pure: no command line, no clock, no
 * entropy, so the host tests drive it. */
#ifndef KERNEL_NET_KEYED_SERVICE_H
#define KERNEL_NET_KEYED_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"

#define KEYED_KEY_MIN_BYTES 16 /* 128 bits */
#define KEYED_KEY_MAX_BYTES 64 /* one SHA-256 block: longer keys would be hashed anyway */
/* Enough for every error keyed_key_parse writes. */
#define KEYED_KEY_ERROR_MAX 96

struct keyed_service {
    bool keyed; /* a key of KEYED_KEY_MIN_BYTES .. KEYED_KEY_MAX_BYTES is in key */
    size_t key_len;
    uint8_t key[KEYED_KEY_MAX_BYTES];
    uint8_t secret[SHA256_DIGEST_SIZE]; /* this boot's, this service's: the shell's tokens, gdb's nonces */
};

/* Fills *s with secret and, when key_len is KEYED_KEY_MIN_BYTES .. KEYED_KEY_MAX_BYTES, the key (keyed);
 * key NULL, key_len 0 or a length outside that range: unkeyed, no key kept. */
void keyed_service_init(struct keyed_service *s, const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key,
                        size_t key_len);

/* The udpsh.key= option: an even number of hex digits (either case), KEYED_KEY_MIN_BYTES to
 * KEYED_KEY_MAX_BYTES bytes. False, with one line (no newline) in error and key / *key_len untouched, when it
 * is not. */
bool keyed_key_parse(const char *text, uint8_t key[KEYED_KEY_MAX_BYTES], size_t *key_len, char *error,
                     size_t error_cap);

#endif
