/* tests/fuzz/fuzz_gdb_udp_auth.c: the KPG1 gdb datagram (gdbstub/udp_auth.c), keyed and plain (the empty key). The input is a script of
 * datagrams from two senders: raw bytes, or datagrams sealed as the relay seals them (under the key or under
 * another, with the sender's nonce or the other's, the counter the script picks, then possibly cut or with a
 * byte flipped). Invariants: a DROP leaves the out-parameters and every counter and nonce as they were; a
 * REPLY answers only a whole hello, at 85 bytes within 3x, MACed under the key, and changes no state; an ACCEPT
 * is only ever of a datagram sealed here under the key with the sender's own nonce, unaltered, and its counter
 * above its session's floor (the last committed counter of the sender's session; 0 for a newcomer), its gdb
 * bytes exactly those sealed, inside the datagram, and it moves no floor until the script commits it (as the
 * transport does with what it acts on); committed, the replies sealed after it open under the key and the
 * sender's nonce with a counter rising by one each, and nothing is sealed for anyone else. The script also ends
 * the session (as the transport does when it forgets its peer) and replays the last committed datagram, which
 * never opens again, in that session or a later one. Insecure, every datagram up to GDB_UDP_INNER_MAX is
 * accepted whole, as unproven (ACCEPT_RAW). */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "gdbstub/udp_auth.h"
#include "kernel/lib/hmac.h"

static const uint8_t secret[32] = { 1, 2, 3 };
static const uint8_t key[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };
static const uint8_t other_key[16] = { 0x33 };
static const uint32_t ips[2] = { 0x0a000202, 0x0a000203 };
static const uint16_t ports[2] = { 40000, 40001 };
static size_t key_len; /* this input's: 16 keyed, 0 plain (MACs under the empty key) */

struct cursor {
    const uint8_t *p;
    size_t left;
};

static unsigned take(struct cursor *c)
{
    if (!c->left)
        return 0;
    c->left--;
    return *c->p++;
}

static size_t seal_as_relay(uint8_t *out, const struct gdb_udp_auth *a, const uint8_t *k, int sender_nonce,
                            uint64_t counter, const uint8_t *gdb, size_t len)
{
    memcpy(out, GDB_UDP_MAGIC "d", 5);
    gdb_udp_session_nonce(a, ips[sender_nonce], ports[sender_nonce], out + 5);
    for (int i = 0; i < 8; i++)
        out[21 + i] = (uint8_t)(counter >> (56 - 8 * i));
    memcpy(out + GDB_UDP_HEAD_LEN, gdb, len);
    hmac_sha256(k, k == key ? key_len : 16, out, GDB_UDP_HEAD_LEN + len, out + GDB_UDP_HEAD_LEN + len);
    return GDB_UDP_KEYED_OVERHEAD + len;
}

static void check_reply_opens(const struct gdb_udp_auth *a, int sender, const uint8_t *d, size_t n,
                              const uint8_t *inner, size_t len, uint64_t counter)
{
    uint8_t nonce[16];
    gdb_udp_session_nonce(a, ips[sender], ports[sender], nonce);
    CHECK(n == len + GDB_UDP_KEYED_OVERHEAD);
    CHECK(memcmp(d, GDB_UDP_MAGIC "r", 5) == 0);
    CHECK(memcmp(d + 5, nonce, 16) == 0);
    uint64_t got = 0;
    for (int i = 0; i < 8; i++)
        got = got << 8 | d[21 + i];
    CHECK(got == counter);
    CHECK(memcmp(d + GDB_UDP_HEAD_LEN, inner, len) == 0);
    uint8_t mac[32];
    hmac_sha256(key, key_len, d, n - 32, mac);
    CHECK(memcmp(mac, d + n - 32, 32) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cursor c = { data, size };
    static struct gdb_udp_auth a;
    unsigned mode = take(&c) % 3; /* 0 insecure, 1 plain, 2 keyed */
    key_len = mode == 2 ? sizeof key : 0;
    gdb_udp_auth_init(&a, secret, key_len ? key : NULL, key_len);
    bool insecure = mode == 0;
    if (insecure)
        CHECK(gdb_udp_auth_set_insecure(&a));
    static uint8_t d[GDB_UDP_INNER_MAX + GDB_UDP_KEYED_OVERHEAD + 64];
    static uint8_t out[GDB_UDP_INNER_MAX + GDB_UDP_SEAL_OVERHEAD];
    static uint8_t committed[1024 + GDB_UDP_KEYED_OVERHEAD]; /* the last datagram committed, for a replay */
    size_t committed_len = 0;
    int committed_sender = 0;
    int session = -1; /* the sender whose session is open */
    uint64_t floor = 0;
    while (c.left) {
        unsigned op = take(&c);
        int sender = op & 1;
        if (!insecure && (op & 0x86) == 0x80) { /* not a datagram: the session ends, or a replay */
            if (sender == 0) {
                gdb_udp_auth_end_session(&a);
                CHECK(!a.spoken_to && a.rx_floor == 0);
                session = -1;
                floor = 0;
            } else if (committed_len) {
                const uint8_t *in = 0;
                size_t in_len = 0;
                CHECK(gdb_udp_auth_open(&a, ips[committed_sender], ports[committed_sender], committed,
                                        committed_len, &in, &in_len) == GDB_UDP_DROP);
            }
            continue;
        }
        size_t len = take(&c) | (size_t)(take(&c) & 0x03) << 8; /* up to 1 KiB: the MACs dominate */
        if (len > c.left)
            len = c.left;
        const uint8_t *bytes = c.p;
        c.p += len;
        c.left -= len;
        size_t n;
        bool genuine = false;
        uint64_t counter = 0;
        if ((op & 6) == 0 || insecure) {
            memcpy(d, bytes, len); /* raw: as it came */
            n = len;
        } else {
            for (int i = 0; i < 4; i++)
                counter = counter << 8 | take(&c);
            bool good_key = (op & 8) == 0, own_nonce = (op & 16) == 0;
            n = seal_as_relay(d, &a, good_key ? key : other_key, own_nonce ? sender : !sender, counter, bytes, len);
            genuine = good_key && own_nonce;
            if (op & 32) { /* cut (a cut at its whole length is no cut) */
                size_t cut = take(&c) % (n + 1);
                genuine = genuine && cut == n;
                n = cut;
            }
            if (op & 64) { /* one byte flipped */
                size_t at = take(&c) | (size_t)take(&c) << 8;
                if (n) {
                    d[at % n] ^= (uint8_t)(1u << (take(&c) & 7));
                    genuine = false;
                }
            }
        }
        struct gdb_udp_auth before = a;
        const uint8_t *sentinel = (const uint8_t *)"s";
        const uint8_t *inner = sentinel;
        size_t inner_len = 7777;
        enum gdb_udp_verdict v = gdb_udp_auth_open(&a, ips[sender], ports[sender], d, n, &inner, &inner_len);
        if (insecure) {
            CHECK(v == (n <= GDB_UDP_INNER_MAX ? GDB_UDP_ACCEPT_RAW : GDB_UDP_DROP));
            if (v == GDB_UDP_ACCEPT_RAW)
                CHECK(inner == d && inner_len == n);
            size_t m = gdb_udp_auth_seal(&a, ips[sender], ports[sender], bytes, len, out, sizeof out);
            CHECK(m == len && memcmp(out, bytes, len) == 0);
            continue;
        }
        switch (v) {
        case GDB_UDP_DROP:
            CHECK(inner == sentinel && inner_len == 7777);
            CHECK(a.rx_floor == before.rx_floor && a.tx_counter == before.tx_counter);
            CHECK(a.spoken_to == before.spoken_to);
            CHECK(!genuine || counter <= (sender == session ? floor : 0) || len > GDB_UDP_INNER_MAX);
            CHECK(a.generation == before.generation);
            break;
        case GDB_UDP_REPLY: {
            CHECK(n == GDB_UDP_HELLO_LEN && memcmp(d, GDB_UDP_MAGIC "h", 5) == 0);
            CHECK(inner_len == GDB_UDP_NONCE_LEN);
            CHECK(inner_len + NET_UDP_HEADER_BYTES <= NET_UDP_AMPLIFICATION * (n + NET_UDP_HEADER_BYTES));
            uint8_t mac[32];
            hmac_sha256(key, key_len, inner, inner_len - 32, mac);
            CHECK(memcmp(mac, inner + inner_len - 32, 32) == 0);
            CHECK(a.rx_floor == before.rx_floor && a.spoken_to == before.spoken_to);
            break;
        }
        case GDB_UDP_ACCEPT:
            CHECK(genuine && counter > (sender == session ? floor : 0));
            CHECK(inner == d + GDB_UDP_HEAD_LEN && inner_len == len && memcmp(inner, bytes, len) == 0);
            CHECK(a.rx_floor == before.rx_floor && a.spoken_to == before.spoken_to);
            CHECK(a.generation == before.generation);
            if (!(op & 128)) { /* not acted on: nothing for it, and the session's peer is as it was */
                size_t m = gdb_udp_auth_seal(&a, ips[sender], ports[sender], bytes, len, out, sizeof out);
                CHECK(sender == session || m == 0);
                break;
            }
            gdb_udp_auth_commit(&a);
            session = sender;
            floor = counter;
            CHECK(a.rx_floor == counter && a.spoken_to);
            memcpy(committed, d, n);
            committed_len = n;
            committed_sender = sender;
            /* the other sender is no session's: nothing is sealed for it */
            CHECK(gdb_udp_auth_seal(&a, ips[!sender], ports[!sender], bytes, len, out, sizeof out) == 0);
            /* the answer goes out sealed under this sender's nonce, counting on */
            for (int r = 0; r < 2; r++) {
                uint64_t next = a.tx_counter + 1;
                size_t m = gdb_udp_auth_seal(&a, ips[sender], ports[sender], bytes, len, out, sizeof out);
                check_reply_opens(&a, sender, out, m, bytes, len, next);
            }
            break;
        case GDB_UDP_ACCEPT_RAW:
            CHECK(false); /* never from a KPG1 mode */
            break;
        }
    }
    return 0;
}
