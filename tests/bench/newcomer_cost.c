/* tests/bench/newcomer_cost.c: the driver tests/bench/newcomer_cost.sh runs to measure what the gdb UDP
 * transport's answer to a newcomer's hello costs, built for the host with the kernel's own code generation for
 * gdbstub/udp_auth.c and kernel/net/keyed_service.c (kernel/lib's HMAC-SHA256 in the core):
 *   hello -- N hellos, each with a client nonce of its own from a port of its own, judged by gdb_udp_auth_open
 *            under a 17-byte key: the session nonce (one HMAC under the boot secret) and the answer's MAC (one
 *            under the key), as gdbstub/udp.c's datagram_in asks for every hello the newcomers' budget admits.
 * Prints "calls N" for the script to divide callgrind's count by, and checks the work was real (every hello
 * answered with a nonce answer of its full length, counted, two HMACs each) and exits non-zero if not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdbstub/udp_auth.h"

static void fail(const char *what)
{
    fprintf(stderr, "newcomer_cost: %s\n", what);
    exit(1);
}

__attribute__((noinline)) static void answer_hellos(struct gdb_udp_auth *a, unsigned long n)
{
    uint8_t hello[GDB_UDP_HELLO_LEN];
    memcpy(hello, GDB_UDP_MAGIC, GDB_UDP_MAGIC_LEN);
    hello[GDB_UDP_MAGIC_LEN] = GDB_UDP_KIND_HELLO;
    for (unsigned long i = 0; i < n; i++) {
        memcpy(hello + GDB_UDP_MAGIC_LEN + 1, &i, sizeof i);
        const uint8_t *inner = 0;
        size_t inner_len = 0;
        if (gdb_udp_auth_open(a, 0x0a000264u, (uint16_t)(1024 + i % 60000), hello, sizeof hello, &inner,
                              &inner_len) != GDB_UDP_REPLY ||
            inner_len != GDB_UDP_NONCE_LEN)
            fail("a hello was not answered with a whole nonce answer");
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "hello") != 0 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: newcomer_cost hello N\n");
        return 2;
    }
    unsigned long n = (unsigned long)atol(argv[2]);
    static struct gdb_udp_auth auth;
    uint8_t secret[SHA256_DIGEST_SIZE], key[17];
    for (size_t i = 0; i < sizeof secret; i++)
        secret[i] = (uint8_t)(i * 37 + 1);
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i * 11 + 5);
    gdb_udp_auth_init(&auth, secret, key, sizeof key);
    answer_hellos(&auth, n);
    if (auth.counts.hellos != n || auth.counts.macs != 2 * n)
        fail("the hellos were not each answered and counted with two HMACs");
    printf("calls %lu\n", n);
    return 0;
}
