/* gdbstub/udp_key.c: the kernel's one gdb_udp_auth (gdbstub/udp_auth.h) behind the transport's seam -- keyed
 * by the UDP shell's udpsh.key=, plain KPG1 without one, raw gdb bytes only with gdb.udp.insecure; its boot
 * secret drawn from the processor's entropy, set up as the UDP shell's is (keyed_boot_draw,
 * kernel/net/boot_secret.h) but under the domain "gdb". A udpsh.key= that cannot be used (it does not parse, or
 * the command line naming it was cut) makes the UDP shell refuse every request; the debugger then takes no
 * datagram at all. */
#include "gdbstub/udp_auth.h"

#include "kernel/cmdline.h"

#include "kernel/net/boot_secret.h"
#include "kernel/log.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

static struct gdb_udp_auth auth;
static bool started;
static bool refuse_all; /* udpsh.key= given but unusable */

static void start(void)
{
    struct keyed_boot boot;
    keyed_boot_draw("gdb", &boot);
    refuse_all = boot.key_refused;
    gdb_udp_auth_init(&auth, boot.secret, boot.key_len ? boot.key : 0, boot.key_len);
    started = true;
    bool insecure = cmdline_get("gdb.udp.insecure") != 0;
    if (refuse_all)
        log_warn("gdb: udpsh.key: %s; the UDP debugger takes no datagram (fix the key)", boot.key_error);
    else if (insecure && !gdb_udp_auth_set_insecure(&auth))
        log_warn("gdb: gdb.udp.insecure ignored: udpsh.key= keys the UDP debugger (attach through "
                 "scripts/kprof-gdb-relay)");
    else if (insecure)
        log_warn("gdb: gdb.udp.insecure: raw gdb datagrams taken; anyone who can forge an allowlisted address, "
                 "without receiving, controls the machine");
    else if (auth.service.keyed)
        log_info("gdb: udp keyed (udpsh.key): attach through scripts/kprof-gdb-relay");
    else
        log_info("gdb: udp plain KPG1 (no key): attach through scripts/kprof-gdb-relay");
    memset(&boot, 0, sizeof boot);
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

void gdb_udp_commit(void)
{
    if (started && !refuse_all)
        gdb_udp_auth_commit(&auth);
}

void gdb_udp_auth_reset(void)
{
    if (started)
        gdb_udp_auth_end_session(&auth);
}

void gdb_udp_auth_report(struct sink *out)
{
    const struct gdb_udp_auth_counts *c = &auth.counts;
    if (refuse_all) {
        sink_puts(out, "gdb udp auth: refusing every datagram (udpsh.key= cannot be used)\n");
        return;
    }
    sink_printf(out, "gdb udp auth: %s, %llu accepted, %llu hellos answered, %llu plain or malformed, "
                     "%llu bad nonce, %llu bad mac, %llu replayed\n",
                auth.service.keyed ? "keyed" : auth.insecure ? "insecure" : "plain", (unsigned long long)c->accepted,
                (unsigned long long)c->hellos, (unsigned long long)c->plain, (unsigned long long)c->bad_nonce,
                (unsigned long long)c->bad_mac, (unsigned long long)c->replayed);
}
