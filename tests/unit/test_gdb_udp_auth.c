/* tests/unit/test_gdb_udp_auth.c: gdbstub/udp_auth.c -- the keyed gdb datagram. The nonce, a data
 * datagram's MAC, the hello's answer and a sealed reply are pinned to bytes computed independently in Python
 * (as scripts/kprof-gdb-relay computes them); forged, replayed, reordered, truncated, wrong-key, wrong-address,
 * plain and reflected datagrams are dropped and change nothing; the floor is a session's, raised only by a
 * committed datagram (one the transport acted on), and an ended session's datagrams open no more; without a key the same format under the empty
 * key (raw gdb bytes refused), the insecure mode the identity both ways (never over a key); every length is
 * checked before any HMAC is computed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fixed_keys.h"
#include "gdbstub/udp_auth.h"
#include "kernel/lib/hmac.h"
#include "unit_main.h"

#define IP 0x0a000242u /* 10.0.2.66 */
#define PORT 40000

/* Python: hmac.new(bytes(range(32)), b"gdb" + struct.pack(">IHQ", 0x0a000242, 40000, 0), sha256).digest()[:16]
 * (generation 0: the first session's) */
#define NONCE_HEX "94196c00de191e571d9c3112a084afd9"
/* hmac.new(bytes(range(16, 32)), b"KPG1d" + nonce + struct.pack(">Q", 7) + b"$g#67", sha256) */
#define MAC_7_G_HEX "a5335f7bb52d1cd2cc84a3d39fc907ac1123a3b1a3997606cb8c2ee3a26f6c84"
/* ... over b"KPG1n" + bytes(range(0xa0, 0xb0)) + nonce + struct.pack(">QQ", 0, 0) */
#define ANSWER_MAC_HEX "eb691b9e49180ca1aa549bc5f62173e69f725653f4330af0dfa6b35140f79fb7"
/* ... over b"KPG1r" + nonce + struct.pack(">Q", 1) + b"+$OK#9a" */
#define REPLY_1_MAC_HEX "164a7afb17c533c9cd77e1543dc648d0cbca2bce313397902bcb4b3b00b77305"

static struct gdb_udp_auth auth;
static uint8_t secret[32], key[16];
static const uint8_t *inner;
static size_t inner_len;

static void from_hex(const char *hex, uint8_t *out)
{
    for (size_t i = 0; hex[2 * i]; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void setup(bool keyed)
{
    fixed_keys_fill(secret, key);
    gdb_udp_auth_init(&auth, secret, keyed ? key : NULL, keyed ? sizeof key : 0);
    inner = NULL;
    inner_len = 0;
}

/* A data datagram as the relay makes it: under the key k (k_len bytes), for ip:port, counter, gdb bytes. */
static size_t data_datagram(uint8_t *out, const uint8_t *k, size_t k_len, uint32_t ip, uint16_t port,
                            uint64_t counter, const char *gdb)
{
    size_t n = 0;
    memcpy(out, "KPG1d", 5);
    n = 5;
    gdb_udp_session_nonce(&auth, ip, port, out + n);
    n += 16;
    for (int i = 0; i < 8; i++)
        out[n++] = (uint8_t)(counter >> (56 - 8 * i));
    memcpy(out + n, gdb, strlen(gdb));
    n += strlen(gdb);
    hmac_sha256(k, k_len, out, n, out + n);
    return n + 32;
}

static enum gdb_udp_verdict open_(uint32_t ip, uint16_t port, const uint8_t *d, size_t len)
{
    return gdb_udp_auth_open(&auth, ip, port, d, len, &inner, &inner_len);
}

/* Opens from ip:port, and is not committed: nothing about the session moves. */
static void assert_opens_at(uint32_t ip, uint16_t port, const uint8_t *d, size_t len, const char *gdb)
{
    struct gdb_udp_auth before = auth;
    assert_int_equal(open_(ip, port, d, len), GDB_UDP_ACCEPT);
    assert_int_equal(inner_len, strlen(gdb));
    assert_memory_equal(inner, gdb, inner_len);
    assert_int_equal(auth.rx_floor, before.rx_floor);
    assert_int_equal(auth.spoken_to, before.spoken_to);
    assert_int_equal(auth.generation, before.generation);
    assert_int_equal(auth.peer_ip, before.peer_ip);
}

/* Opens from IP:PORT and is acted on (committed), as the transport does with what reaches the stub. */
static void assert_accepts(const uint8_t *d, size_t len, const char *gdb)
{
    assert_int_equal(open_(IP, PORT, d, len), GDB_UDP_ACCEPT);
    gdb_udp_auth_commit(&auth);
    assert_int_equal(inner_len, strlen(gdb));
    assert_memory_equal(inner, gdb, inner_len);
    assert_true(inner >= d && inner + inner_len <= d + len);
}

/* A drop leaves what it was given and every piece of state as they were. */
static void assert_drops(uint32_t ip, uint16_t port, const uint8_t *d, size_t len)
{
    struct gdb_udp_auth before = auth;
    const uint8_t *sentinel = (const uint8_t *)"sentinel";
    inner = sentinel;
    inner_len = 1234;
    assert_int_equal(open_(ip, port, d, len), GDB_UDP_DROP);
    assert_ptr_equal(inner, sentinel);
    assert_int_equal(inner_len, 1234);
    assert_int_equal(auth.rx_floor, before.rx_floor);
    assert_int_equal(auth.tx_counter, before.tx_counter);
    assert_int_equal(auth.spoken_to, before.spoken_to);
    assert_int_equal(auth.generation, before.generation);
    assert_int_equal(auth.session_generation, before.session_generation);
    assert_int_equal(auth.counts.accepted, before.counts.accepted);
    gdb_udp_auth_commit(&auth); /* nothing opened: committing it does nothing */
    assert_int_equal(auth.rx_floor, before.rx_floor);
    assert_int_equal(auth.spoken_to, before.spoken_to);
    assert_int_equal(auth.generation, before.generation);
}

static void test_insecure_is_the_identity_and_never_over_a_key(void **state)
{
    (void)state;
    setup(true);
    assert_false(gdb_udp_auth_set_insecure(&auth)); /* a key is never thrown away */
    assert_false(auth.insecure);
    setup(false);
    assert_true(gdb_udp_auth_set_insecure(&auth));
    const uint8_t d[] = "$g#67";
    assert_int_equal(open_(IP, PORT, d, 5), GDB_UDP_ACCEPT_RAW);
    assert_ptr_equal(inner, d);
    assert_int_equal(inner_len, 5);
    assert_int_equal(open_(IP, PORT, d, 0), GDB_UDP_ACCEPT_RAW);
    assert_int_equal(inner_len, 0);
    uint8_t out[16];
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, d, 5, out, sizeof out), 5);
    assert_memory_equal(out, d, 5);
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, d, 5, out, 4), 0);
    static uint8_t big[GDB_UDP_INNER_MAX + 1];
    assert_int_equal(open_(IP, PORT, big, sizeof big), GDB_UDP_DROP);
}

/* Without a key and without gdb.udp.insecure: KPG1 under the empty key. gdb's raw bytes open as nothing; a
 * data datagram MACed under the empty key with the address's nonce is accepted (as proven); the answer to a
 * hello is MACed under the empty key. */
static void test_plain_is_kpg1_under_the_empty_key(void **state)
{
    (void)state;
    setup(false);
    const uint8_t raw[] = "$qSupported:multiprocess+#c6";
    assert_int_equal(open_(IP, PORT, raw, sizeof raw - 1), GDB_UDP_DROP);
    assert_int_equal(open_(IP, PORT, (const uint8_t *)"\x03", 1), GDB_UDP_DROP);
    uint8_t d[128];
    size_t n = data_datagram(d, (const uint8_t *)"", 0, IP, PORT, 7, "$g#67");
    assert_int_equal(open_(IP, PORT, d, n), GDB_UDP_ACCEPT);
    assert_int_equal(inner_len, 5);
    assert_memory_equal(inner, "$g#67", 5);
    /* the same bytes from another address: not its nonce */
    n = data_datagram(d, (const uint8_t *)"", 0, IP, PORT, 8, "$g#67");
    assert_int_equal(open_(IP + 1, PORT, d, n), GDB_UDP_DROP);
    uint8_t hello[GDB_UDP_HELLO_LEN] = { 'K', 'P', 'G', '1', 'h' };
    assert_int_equal(open_(IP, PORT, hello, sizeof hello), GDB_UDP_REPLY);
    uint8_t mac[32];
    hmac_sha256("", 0, inner, GDB_UDP_NONCE_LEN - 32, mac);
    assert_memory_equal(inner + GDB_UDP_NONCE_LEN - 32, mac, 32);
}

/* Lengths, magic and kinds are checked before any HMAC: an oversized data datagram, a hello of the wrong
 * length, and the kernel's own kinds (a nonce answer, a reply: what another kprof would send back) cost no
 * HMAC and get nothing. */
static void test_lengths_and_kinds_checked_before_any_mac(void **state)
{
    (void)state;
    for (int keyed = 0; keyed < 2; keyed++) {
        setup(keyed);
        static uint8_t big[GDB_UDP_INNER_MAX + GDB_UDP_KEYED_OVERHEAD + 1];
        memcpy(big, "KPG1d", 5);
        assert_int_equal(open_(IP, PORT, big, sizeof big), GDB_UDP_DROP);
        uint8_t hello[GDB_UDP_HELLO_LEN + 1] = { 'K', 'P', 'G', '1', 'h' };
        assert_int_equal(open_(IP, PORT, hello, sizeof hello), GDB_UDP_DROP);
        assert_int_equal(open_(IP, PORT, hello, sizeof hello - 2), GDB_UDP_DROP);
        uint8_t theirs[GDB_UDP_NONCE_LEN] = { 'K', 'P', 'G', '1', 'n' };
        assert_int_equal(open_(IP, PORT, theirs, sizeof theirs), GDB_UDP_DROP);
        theirs[4] = 'r';
        assert_int_equal(open_(IP, PORT, theirs, sizeof theirs), GDB_UDP_DROP);
        assert_int_equal(auth.counts.macs, 0);
        assert_false(gdb_udp_is_hello(hello, sizeof hello));
        assert_true(gdb_udp_is_hello(hello, GDB_UDP_HELLO_LEN));
        /* a whole hello costs its two */
        assert_int_equal(open_(IP, PORT, hello, GDB_UDP_HELLO_LEN), GDB_UDP_REPLY);
        assert_int_equal(auth.counts.macs, 2);
    }
}

static void test_nonce_is_pinned_and_per_address(void **state)
{
    (void)state;
    setup(true);
    uint8_t want[16], got[16], other[16];
    from_hex(NONCE_HEX, want);
    gdb_udp_session_nonce(&auth, IP, PORT, got);
    assert_memory_equal(got, want, 16);
    gdb_udp_session_nonce(&auth, IP, PORT + 1, other);
    assert_memory_not_equal(other, want, 16);
    gdb_udp_session_nonce(&auth, IP + 1, PORT, other);
    assert_memory_not_equal(other, want, 16);
    secret[0] ^= 1; /* another boot */
    struct gdb_udp_auth reboot;
    gdb_udp_auth_init(&reboot, secret, key, sizeof key);
    gdb_udp_session_nonce(&reboot, IP, PORT, other);
    assert_memory_not_equal(other, want, 16);
}

static void test_hello_answered_with_a_macd_nonce_and_nothing_else(void **state)
{
    (void)state;
    setup(true);
    uint8_t hello[GDB_UDP_HELLO_LEN];
    memcpy(hello, "KPG1h", 5);
    for (int i = 0; i < 16; i++)
        hello[5 + i] = (uint8_t)(0xa0 + i);
    assert_int_equal(open_(IP, PORT, hello, sizeof hello), GDB_UDP_REPLY);
    assert_int_equal(inner_len, GDB_UDP_NONCE_LEN);
    assert_int_equal(inner_len, 85);
    assert_memory_equal(inner, "KPG1n", 5);
    assert_memory_equal(inner + 5, hello + 5, 16);
    uint8_t nonce[16], mac[32];
    from_hex(NONCE_HEX, nonce);
    assert_memory_equal(inner + 21, nonce, 16);
    static const uint8_t zeros[16];
    assert_memory_equal(inner + 37, zeros, 16); /* rx_floor 0, tx_from 0 */
    from_hex(ANSWER_MAC_HEX, mac);
    assert_memory_equal(inner + 53, mac, 32);
    /* within the UDP shell's budget, headers counted */
    assert_true(inner_len + NET_UDP_HEADER_BYTES <= NET_UDP_AMPLIFICATION * (sizeof hello + NET_UDP_HEADER_BYTES));
    /* a hello claims nothing: no peer, so the stub cannot answer anyone */
    assert_false(auth.spoken_to);
    assert_int_equal(auth.rx_floor, 0);
    uint8_t out[128];
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+", 1, out, sizeof out), 0);
    /* a hello of another length is not answered (an answer to a shorter one could pass the budget) */
    assert_drops(IP, PORT, hello, sizeof hello - 1);
    uint8_t longer[GDB_UDP_HELLO_LEN + 1] = { 'K', 'P', 'G', '1', 'h' };
    assert_drops(IP, PORT, longer, sizeof longer);
}

static void test_hello_states_the_counters(void **state)
{
    (void)state;
    setup(true);
    uint8_t d[128], out[128];
    size_t n = data_datagram(d, key, sizeof key, IP, PORT, 1000, "$g#67");
    assert_accepts(d, n, "$g#67");
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+", 1, out, sizeof out), 1 + GDB_UDP_KEYED_OVERHEAD);
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+", 1, out, sizeof out), 1 + GDB_UDP_KEYED_OVERHEAD);
    uint8_t hello[GDB_UDP_HELLO_LEN] = { 'K', 'P', 'G', '1', 'h' };
    assert_int_equal(open_(IP, PORT, hello, sizeof hello), GDB_UDP_REPLY);
    const uint8_t rx[8] = { 0, 0, 0, 0, 0, 0, 0x03, 0xe8 }, tx[8] = { 0, 0, 0, 0, 0, 0, 0, 2 };
    assert_memory_equal(inner + 37, rx, 8);
    assert_memory_equal(inner + 45, tx, 8);
    uint8_t mac[32];
    hmac_sha256(key, sizeof key, inner, 53, mac);
    assert_memory_equal(inner + 53, mac, 32);
}

static void test_data_pinned_accepted_and_reply_sealed(void **state)
{
    (void)state;
    setup(true);
    uint8_t d[128];
    size_t n = data_datagram(d, key, sizeof key, IP, PORT, 7, "$g#67");
    assert_int_equal(n, 5 + 16 + 8 + 5 + 32);
    uint8_t mac[32];
    from_hex(MAC_7_G_HEX, mac);
    assert_memory_equal(d + n - 32, mac, 32);
    assert_accepts(d, n, "$g#67");
    assert_int_equal(auth.rx_floor, 7);

    uint8_t out[128];
    size_t m = gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+$OK#9a", 7, out, sizeof out);
    assert_int_equal(m, 7 + GDB_UDP_KEYED_OVERHEAD);
    uint8_t nonce[16];
    from_hex(NONCE_HEX, nonce);
    assert_memory_equal(out, "KPG1r", 5);
    assert_memory_equal(out + 5, nonce, 16);
    const uint8_t one[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
    assert_memory_equal(out + 21, one, 8);
    assert_memory_equal(out + 29, "+$OK#9a", 7);
    from_hex(REPLY_1_MAC_HEX, mac);
    assert_memory_equal(out + 36, mac, 32);
    /* the next reply counts on; a cap without room for the seal gives nothing */
    m = gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"", 0, out, sizeof out);
    assert_int_equal(m, GDB_UDP_KEYED_OVERHEAD);
    assert_int_equal(out[28], 2);
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+", 1, out, GDB_UDP_KEYED_OVERHEAD), 0);
    assert_int_equal(auth.tx_counter, 2);
    /* an empty gdb payload is a datagram like any other */
    n = data_datagram(d, key, sizeof key, IP, PORT, 8, "");
    assert_accepts(d, n, "");
}

static void test_replies_sealed_under_the_nonce_of_their_address(void **state)
{
    (void)state;
    setup(true);
    uint8_t d[128], out[128], nonce[16];
    size_t n = data_datagram(d, key, sizeof key, IP, PORT, 3, "$g#67");
    assert_accepts(d, n, "$g#67");
    /* another key holder's datagram, accepted here, that the transport then did not take (not the peer) */
    n = data_datagram(d, key, sizeof key, IP + 1, PORT, 4, "+");
    assert_int_equal(open_(IP + 1, PORT, d, n), GDB_UDP_ACCEPT);
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"$OK#9a", 6, out, sizeof out),
                     6 + GDB_UDP_KEYED_OVERHEAD);
    from_hex(NONCE_HEX, nonce);
    assert_memory_equal(out + 5, nonce, 16); /* still the peer's session */
}

static void test_replayed_duplicated_and_reordered_dropped(void **state)
{
    (void)state;
    setup(true);
    uint8_t d5[128], d6[128], d9[128];
    size_t n5 = data_datagram(d5, key, sizeof key, IP, PORT, 5, "$m1000,4#8d");
    size_t n6 = data_datagram(d6, key, sizeof key, IP, PORT, 6, "$c#63");
    size_t n9 = data_datagram(d9, key, sizeof key, IP, PORT, 9, "+");
    assert_accepts(d5, n5, "$m1000,4#8d");
    assert_drops(IP, PORT, d5, n5); /* duplicate */
    assert_int_equal(auth.counts.replayed, 1);
    assert_accepts(d9, n9, "+");
    assert_drops(IP, PORT, d6, n6); /* arrived after a later one: gdb retransmits it under a new counter */
    assert_drops(IP, PORT, d5, n5);
    assert_drops(IP, PORT, d9, n9);
    assert_int_equal(auth.counts.replayed, 4);
    uint8_t d10[128];
    size_t n10 = data_datagram(d10, key, sizeof key, IP, PORT, 10, "$c#63");
    assert_accepts(d10, n10, "$c#63");
}

static void test_forged_truncated_wrong_key_wrong_address_dropped(void **state)
{
    (void)state;
    setup(true);
    uint8_t d[128], bad[128];
    /* a counter far ahead, forged: must not raise the floor */
    size_t n = data_datagram(d, key, sizeof key, IP, PORT, UINT64_MAX, "$D#44");
    for (size_t i = 0; i < n; i++) {
        memcpy(bad, d, n);
        bad[i] ^= 0x40;
        assert_drops(IP, PORT, bad, n); /* every byte covered: magic, kind, nonce, counter, payload, MAC */
    }
    for (size_t cut = 0; cut < n; cut++)
        assert_drops(IP, PORT, d, cut);
    memcpy(bad, d, n);
    bad[n] = '+';
    assert_drops(IP, PORT, bad, n + 1);

    uint8_t other_key[16];
    memset(other_key, 0x33, sizeof other_key);
    n = data_datagram(d, other_key, sizeof other_key, IP, PORT, 3, "$g#67");
    assert_drops(IP, PORT, d, n);
    /* every flipped counter, payload and MAC byte, the cuts that still hold a header and a MAC, the byte
     * appended, and this: nothing without the key gets past the MAC */
    assert_int_equal(auth.counts.bad_mac, 8 + 5 + 32 + 5 + 1 + 1);
    assert_int_equal(auth.counts.bad_nonce, 16);

    /* recorded from, or made for, another address: the nonce is not its own */
    n = data_datagram(d, key, sizeof key, IP, PORT, 3, "$g#67");
    assert_drops(IP + 1, PORT, d, n);
    assert_drops(IP, PORT + 1, d, n);
    /* the plain protocol, a kernel's own reply reflected back, a nonce answer, empty */
    assert_drops(IP, PORT, (const uint8_t *)"$g#67", 5);
    assert_drops(IP, PORT, (const uint8_t *)"\x03", 1);
    assert_drops(IP, PORT, d, 0);
    memcpy(bad, d, n);
    bad[4] = 'r';
    hmac_sha256(key, sizeof key, bad, n - 32, bad + n - 32);
    assert_drops(IP, PORT, bad, n);
    bad[4] = 'n';
    assert_drops(IP, PORT, bad, n);
    /* after all of it, the genuine one still opens: nothing above moved the floor */
    assert_accepts(d, n, "$g#67");
}

static void test_oversized_dropped(void **state)
{
    (void)state;
    setup(true);
    static uint8_t big[GDB_UDP_INNER_MAX + GDB_UDP_KEYED_OVERHEAD + 1];
    memcpy(big, "KPG1d", 5);
    gdb_udp_session_nonce(&auth, IP, PORT, big + 5);
    big[28] = 1;
    size_t body = sizeof big - 32;
    hmac_sha256(key, sizeof key, big, body, big + body);
    assert_drops(IP, PORT, big, sizeof big);
    /* one byte less is the largest there is, and opens */
    body--;
    hmac_sha256(key, sizeof key, big, body, big + body);
    assert_int_equal(open_(IP, PORT, big, body + 32), GDB_UDP_ACCEPT);
    assert_int_equal(inner_len, GDB_UDP_INNER_MAX);
}

/* The nonce a hello from ip:port is answered with, and the floor the answer states. */
static uint64_t hello_answer(uint32_t ip, uint16_t port, uint8_t nonce[16])
{
    uint8_t hello[GDB_UDP_HELLO_LEN] = { 'K', 'P', 'G', '1', 'h' };
    assert_int_equal(open_(ip, port, hello, sizeof hello), GDB_UDP_REPLY);
    memcpy(nonce, inner + 21, 16);
    uint64_t floor = 0;
    for (int i = 0; i < 8; i++)
        floor = floor << 8 | inner[37 + i];
    return floor;
}

/* Issue 40: an allowlisted host that holds its own nonce (plain mode: anyone who receives at its address)
 * sends a valid datagram with counter 2^64-1 that the transport does not act on (not the peer, or junk): it
 * opens, and moves no floor -- the peer goes on, and with no peer a later relay attaches from a fresh floor. */
static void test_non_peer_max_counter_moves_no_floor(void **state)
{
    (void)state;
    setup(false);
    const uint8_t *k = (const uint8_t *)"";
    uint8_t d[128], nonce[16];
    /* no session yet: the max-counter datagram opens but is not committed */
    size_t n = data_datagram(d, k, 0, IP + 1, PORT, UINT64_MAX, "+");
    assert_opens_at(IP + 1, PORT, d, n, "+");
    assert_false(auth.spoken_to);
    assert_int_equal(hello_answer(IP, PORT, nonce), 0); /* a later relay is told a fresh floor */
    n = data_datagram(d, k, 0, IP, PORT, 1, "$?#3f");
    assert_accepts(d, n, "$?#3f");
    assert_true(auth.spoken_to);
    assert_int_equal(auth.rx_floor, 1);
    /* with a session: another's max-counter datagram (the transport ignores it) leaves the peer's floor */
    n = data_datagram(d, k, 0, IP + 1, PORT, UINT64_MAX, "$?#3f");
    assert_opens_at(IP + 1, PORT, d, n, "$?#3f");
    assert_int_equal(auth.rx_floor, 1);
    n = data_datagram(d, k, 0, IP, PORT, 2, "$g#67");
    assert_accepts(d, n, "$g#67");
    assert_int_equal(auth.rx_floor, 2);
    /* and the peer's own, opened and not acted on (a repeat the transport dropped), moves nothing either */
    n = data_datagram(d, k, 0, IP, PORT, UINT64_MAX, "$g#67");
    assert_opens_at(IP, PORT, d, n, "$g#67");
    assert_int_equal(auth.rx_floor, 2);
}

/* A peer's own max-counter datagram, acted on, locks only its session: a newcomer still opens from a fresh
 * floor (the transport lets one attach once the peer is idle), and once the session ends a new relay at the
 * same address hellos, is told a new nonce and floor 0, and attaches. */
static void test_peer_max_counter_locks_only_its_session(void **state)
{
    (void)state;
    for (int keyed = 0; keyed < 2; keyed++) {
        setup(keyed);
        const uint8_t *k = keyed ? key : (const uint8_t *)"";
        size_t kl = keyed ? sizeof key : 0;
        uint8_t d[128], old_nonce[16], nonce[16];
        size_t n = data_datagram(d, k, kl, IP, PORT, UINT64_MAX, "$?#3f");
        assert_accepts(d, n, "$?#3f");
        assert_int_equal(hello_answer(IP, PORT, old_nonce), UINT64_MAX);
        n = data_datagram(d, k, kl, IP, PORT, 5, "$g#67");
        assert_drops(IP, PORT, d, n); /* its own session is locked */
        /* a newcomer is not */
        assert_int_equal(hello_answer(IP + 1, PORT, nonce), 0);
        n = data_datagram(d, k, kl, IP + 1, PORT, 5, "$g#67");
        assert_opens_at(IP + 1, PORT, d, n, "$g#67");
        /* the session ends: the same address starts again */
        gdb_udp_auth_end_session(&auth);
        assert_false(auth.spoken_to);
        assert_int_equal(hello_answer(IP, PORT, nonce), 0);
        assert_memory_not_equal(nonce, old_nonce, 16);
        n = data_datagram(d, k, kl, IP, PORT, 5, "$?#3f");
        assert_memory_equal(d + 5, nonce, 16);
        assert_accepts(d, n, "$?#3f");
        assert_int_equal(auth.rx_floor, 5);
        uint8_t out[128];
        assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+", 1, out, sizeof out),
                         1 + GDB_UDP_KEYED_OVERHEAD);
        assert_memory_equal(out + 5, nonce, 16); /* replies under the new session's nonce */
    }
}

/* What was sealed for an ended session does not open again, however high its counter: its nonce names that
 * session's generation. Nor does the nonce a newcomer was told before another's session began. */
static void test_ended_session_datagram_does_not_open(void **state)
{
    (void)state;
    for (int keyed = 0; keyed < 2; keyed++) {
        setup(keyed);
        const uint8_t *k = keyed ? key : (const uint8_t *)"";
        size_t kl = keyed ? sizeof key : 0;
        uint8_t d5[128], d9[128], other[128];
        size_t n5 = data_datagram(d5, k, kl, IP, PORT, 5, "$?#3f");
        size_t no = data_datagram(other, k, kl, IP + 1, PORT, 7, "$?#3f"); /* a newcomer's, gen 0 */
        assert_accepts(d5, n5, "$?#3f");
        size_t n9 = data_datagram(d9, k, kl, IP, PORT, 9, "$g#67"); /* made, never sent in the session */
        gdb_udp_auth_end_session(&auth);
        uint64_t bad = auth.counts.bad_nonce;
        assert_drops(IP, PORT, d5, n5);
        assert_drops(IP, PORT, d9, n9);
        assert_drops(IP + 1, PORT, other, no); /* its generation became IP's session's */
        assert_int_equal(auth.counts.bad_nonce, bad + 3);
        /* another sender's datagram made while a session ran (the transport drops it unopened, not the
         * peer's) is not replayed into the next one */
        n5 = data_datagram(d5, k, kl, IP, PORT, 5, "$?#3f");
        assert_accepts(d5, n5, "$?#3f");
        no = data_datagram(other, k, kl, IP + 1, PORT, 7, "$?#3f");
        gdb_udp_auth_end_session(&auth);
        assert_drops(IP + 1, PORT, other, no);
    }
}

/* The keyed guarantees hold with the floor a session's: within a session a replay, duplicate or reordered
 * datagram is refused (committed counters); across sessions at the same address too, even where the new
 * session's counters start lower than the old one's. */
static void test_keyed_replay_refused_within_and_across_sessions(void **state)
{
    (void)state;
    setup(true);
    uint8_t d1[128], d2[128], e1[128], e2[128];
    size_t n1 = data_datagram(d1, key, sizeof key, IP, PORT, 1000, "$?#3f");
    assert_accepts(d1, n1, "$?#3f");
    size_t n2 = data_datagram(d2, key, sizeof key, IP, PORT, 1001, "$g#67");
    assert_accepts(d2, n2, "$g#67");
    assert_drops(IP, PORT, d1, n1);
    assert_drops(IP, PORT, d2, n2);
    gdb_udp_auth_end_session(&auth);
    size_t m1 = data_datagram(e1, key, sizeof key, IP, PORT, 3, "$?#3f");
    assert_accepts(e1, m1, "$?#3f");
    assert_int_equal(auth.session_generation, 2); /* 0 the first session's, 1 the newcomers' while it ran */
    assert_drops(IP, PORT, d1, n1); /* the old session's, above the new floor, still refused */
    assert_drops(IP, PORT, d2, n2);
    assert_drops(IP, PORT, e1, m1);
    size_t m2 = data_datagram(e2, key, sizeof key, IP, PORT, 4, "$g#67");
    assert_accepts(e2, m2, "$g#67");
    gdb_udp_auth_end_session(&auth);
    assert_drops(IP, PORT, e1, m1);
    assert_drops(IP, PORT, e2, m2);
    /* a newcomer taking over a session (the transport's idle peer replaced) ends the old one too */
    size_t n = data_datagram(d1, key, sizeof key, IP, PORT, 1, "$?#3f");
    assert_accepts(d1, n, "$?#3f");
    n2 = data_datagram(d2, key, sizeof key, IP + 1, PORT, 1, "$?#3f");
    assert_int_equal(open_(IP + 1, PORT, d2, n2), GDB_UDP_ACCEPT);
    gdb_udp_auth_commit(&auth);
    assert_int_equal(auth.peer_ip, IP + 1);
    assert_drops(IP, PORT, d1, n);
    uint8_t out[128];
    assert_int_equal(gdb_udp_auth_seal(&auth, IP, PORT, (const uint8_t *)"+", 1, out, sizeof out), 0);
}

UNIT_MAIN(NULL, NULL,
          test_insecure_is_the_identity_and_never_over_a_key, test_plain_is_kpg1_under_the_empty_key,
          test_lengths_and_kinds_checked_before_any_mac, test_nonce_is_pinned_and_per_address,
          test_hello_answered_with_a_macd_nonce_and_nothing_else, test_hello_states_the_counters,
          test_data_pinned_accepted_and_reply_sealed, test_replies_sealed_under_the_nonce_of_their_address,
          test_replayed_duplicated_and_reordered_dropped, test_forged_truncated_wrong_key_wrong_address_dropped,
          test_oversized_dropped, test_non_peer_max_counter_moves_no_floor,
          test_peer_max_counter_locks_only_its_session, test_ended_session_datagram_does_not_open,
          test_keyed_replay_refused_within_and_across_sessions)
