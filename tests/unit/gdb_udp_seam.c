/* tests/unit/gdb_udp_seam.c: the seam of gdbstub/udp_auth.h for host tests of the transport -- the
 * kernel's pure gdb_udp_auth (gdbstub/udp_auth.c) in place of gdbstub/udp_key.c, which reads the
 * command line and the processor's entropy. Plain KPG1 under a zero secret until a test calls gdb_udp_seam_key
 * (or gdb_udp_seam_insecure). */
#include "tests/unit/gdb_udp_seam.h"

static struct gdb_udp_auth auth;
static bool started;

void gdb_udp_seam_key(const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key, size_t key_len)
{
    gdb_udp_auth_init(&auth, secret, key, key_len);
    started = true;
}

void gdb_udp_seam_insecure(void)
{
    gdb_udp_auth_start();
    gdb_udp_auth_set_insecure(&auth);
}

struct gdb_udp_auth *gdb_udp_seam_auth(void)
{
    return &auth;
}

void gdb_udp_auth_start(void)
{
    static const uint8_t zero[SHA256_DIGEST_SIZE];
    if (!started)
        gdb_udp_seam_key(zero, 0, 0);
}

enum gdb_udp_verdict gdb_udp_open(uint32_t ip, uint16_t port, const uint8_t *data, size_t len,
                                  const uint8_t **inner, size_t *inner_len)
{
    gdb_udp_auth_start();
    return gdb_udp_auth_open(&auth, ip, port, data, len, inner, inner_len);
}

size_t gdb_udp_seal(uint32_t ip, uint16_t port, const uint8_t *inner, size_t len, uint8_t *out, size_t cap)
{
    gdb_udp_auth_start();
    return gdb_udp_auth_seal(&auth, ip, port, inner, len, out, cap);
}

void gdb_udp_commit(void)
{
    gdb_udp_auth_start();
    gdb_udp_auth_commit(&auth);
}

void gdb_udp_auth_reset(void)
{
    gdb_udp_auth_start();
    gdb_udp_auth_end_session(&auth);
}

void gdb_udp_auth_report(struct sink *out)
{
    (void)out;
}
