/* kernel/net/boot_secret.h: a keyed service's set-up at boot -- the key from udpsh.key= and the secret the
 * service draws once from the processor's entropy and that key (the UDP shell's token secret, the gdb
 * transport's nonce secret). What it yields goes into the service's struct keyed_service
 * (kernel/net/keyed_service.h). */
#ifndef KERNEL_NET_BOOT_SECRET_H
#define KERNEL_NET_BOOT_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"
#include "kernel/net/keyed_service.h"

/* The service's secret from the boot's entropy pool (gathered at the first call, kernel/net/entropy_pool.h: a
 * hardware generator unless it fails or is refused, and timings always; a warning at boot, saying why, when
 * weak), the cycle counter now, domain (which keeps two services' secrets apart) and the key (so a machine with a
 * weak pool still has a secret nobody can predict once it is keyed). Task context, once per service. */
void boot_secret_derive(const char *domain, const uint8_t *key, size_t key_len, uint8_t secret[SHA256_DIGEST_SIZE]);

/* udpsh.key= as every keyed service reads it. True with the key in key / *key_len (0: no udpsh.key=). False,
 * with one line (no newline) in error saying why, when it is given and cannot be used: it does not parse
 * (keyed_key_parse), or the command line naming it could not be taken whole (cmdline_cut_names), so the key the
 * operator wrote may be lost and running unkeyed would open what it was to close. Task context. */
bool keyed_key_from_cmdline(uint8_t key[KEYED_KEY_MAX_BYTES], size_t *key_len, char *error, size_t error_cap);

/* What one service's set-up found: the key, the secret, and what the service may want to say of them. */
struct keyed_boot {
    uint8_t key[KEYED_KEY_MAX_BYTES];
    size_t key_len;                      /* 0: no udpsh.key=, or one that does not parse */
    bool key_refused;                    /* udpsh.key= was given and cannot be used: key_error says why */
    char key_error[KEYED_KEY_ERROR_MAX];
    uint8_t secret[SHA256_DIGEST_SIZE];  /* boot_secret_derive(domain, key) */
};

/* Task context, once per service at boot: reads and parses udpsh.key= (keyed_key_from_cmdline) and draws the
 * service's secret under domain and that key. Logs nothing of the key (the service says what it makes of a
 * refused one); the first draw of the boot logs the entropy line (boot_secret_derive).
 * The caller gives key and secret to its struct keyed_service, then wipes *b. */
void keyed_boot_draw(const char *domain, struct keyed_boot *b);

/* The next stream run id, from the boot's pool and a counter (entropy_pool_run_id): no clock bits. Task context. */
uint32_t boot_secret_run_id(void);

struct sink;
/* One line for `net` and `lscpu` when a service is keyed and the boot's pool is weak; nothing otherwise. */
void boot_secret_note(struct sink *out);

#endif
