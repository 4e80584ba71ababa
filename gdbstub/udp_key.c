/* gdbstub/udp_key.c: the kernel's one gdb_udp_auth (gdbstub/udp_auth.h) behind the transport's
 * seam -- keyed by the UDP shell's udpsh.key=, its boot secret drawn from the processor's entropy. A udpsh.key=
 * that does not parse makes the UDP shell run unkeyed (reading commands only); the debugger has no such
 * reading-only mode, so then it takes no datagram at all. */
#include "gdbstub/udp_auth.h"

#include "kernel/net/boot_secret.h"
#include "kernel/cmdline.h"
#include "kernel/log.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

static struct gdb_udp_auth auth;
static bool started;
static bool refuse_all; /* udpsh.key= given but unreadable */

static void start(void)
{
    uint8_t key[UDPSH_KEY_MAX_BYTES];
    size_t key_len = 0;
    const char *key_opt = cmdline_get("udpsh.key");
    char error[UDPSH_KEY_ERROR_MAX];
    if (key_opt && !udpsh_key_parse(key_opt, key, &key_len, error, sizeof error)) {
        refuse_all = true;
        key_len = 0;
    }
    uint8_t secret[SHA256_DIGEST_SIZE];
    boot_secret_derive("gdb", key, key_len, secret);
    gdb_udp_auth_init(&auth, secret, key_len ? key : 0, key_len);
    memset(key, 0, sizeof key);
    memset(secret, 0, sizeof secret);
    started = true;
    if (refuse_all)
        log_warn("gdb: udpsh.key: %s; the UDP debugger takes no datagram (fix the key)", error);
    else if (auth.keyed)
        log_info("gdb: udp keyed (udpsh.key): attach through scripts/kprof-gdb-relay");
}

void gdb_udp_auth_start(void)
{
    if (!started)
        start();
}

enum gdb_udp_verdict gdb_udp_open(uint32_t ip, uint16_t port, const uint8_t *data, size_t len,
                                  const uint8_t **inner, size_t *inner_len)
{
    /* Never started here: gdb_udp_open runs while the machine may be stopped, where the command line, the
     * log and the entropy source are off limits (they are not the debugger's own code). */
    if (!started || refuse_all)
        return GDB_UDP_DROP;
    return gdb_udp_auth_open(&auth, ip, port, data, len, inner, inner_len);
}

size_t gdb_udp_seal(uint32_t ip, uint16_t port, const uint8_t *inner, size_t len, uint8_t *out, size_t cap)
{
    if (!started || refuse_all)
        return 0;
    return gdb_udp_auth_seal(&auth, ip, port, inner, len, out, cap);
}

void gdb_udp_auth_reset(void)
{
}

void gdb_udp_auth_report(struct sink *out)
{
    const struct gdb_udp_auth_counts *c = &auth.counts;
    if (refuse_all) {
        sink_puts(out, "gdb udp auth: refusing every datagram (udpsh.key= does not parse)\n");
        return;
    }
    sink_printf(out, "gdb udp auth: %s, %llu accepted, %llu hellos answered, %llu plain or malformed, "
                     "%llu bad nonce, %llu bad mac, %llu replayed\n",
                auth.keyed ? "keyed" : "unkeyed", (unsigned long long)c->accepted, (unsigned long long)c->hellos,
                (unsigned long long)c->plain, (unsigned long long)c->bad_nonce, (unsigned long long)c->bad_mac,
                (unsigned long long)c->replayed);
}
