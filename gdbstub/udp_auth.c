/* gdbstub/udp_auth.c: the KPG1 gdb datagram's logic (gdbstub/udp_auth.h), keyed or plain -- the session
 * nonce a hello is answered with, the checks a data datagram passes before its gdb bytes reach the stub
 * (length, magic, nonce of its address, MAC, rising counter), the sealing of the stub's replies, and the
 * insecure mode's pass-through. Pure, over explicit
 * state; gdbstub/udp_key.c holds the kernel's one instance. The key and the nonce secret are a struct
 * keyed_service (kernel/net/keyed_service.h), as the UDP shell's are. */
#include "gdbstub/udp_auth.h"

#include "kernel/lib/hmac.h"
#include "kernel/lib/string.h"

_Static_assert(GDB_UDP_NONCE_LEN + NET_UDP_HEADER_BYTES <= NET_UDP_AMPLIFICATION * (GDB_UDP_HELLO_LEN + NET_UDP_HEADER_BYTES),
               "a hello's answer keeps to the UDP shell's 3x budget");
_Static_assert(GDB_UDP_KEYED_OVERHEAD <= GDB_UDP_SEAL_OVERHEAD, "the transport leaves room for the seal");

void gdb_udp_auth_init(struct gdb_udp_auth *a, const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key,
                       size_t key_len)
{
    memset(a, 0, sizeof *a);
    keyed_service_init(&a->service, secret, key, key_len);
}

bool gdb_udp_auth_set_insecure(struct gdb_udp_auth *a)
{
    if (a->service.keyed)
        return false;
    a->insecure = true;
    return true;
}

/* Every HMAC this file computes, counted (the unit tests hold the length checks before them to it). */
static void counted_hmac(struct gdb_udp_auth *a, const uint8_t *key, size_t key_len, const uint8_t *data,
                         size_t len, uint8_t out[SHA256_DIGEST_SIZE])
{
    a->counts.macs++;
    hmac_sha256(key, key_len, data, len, out);
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

void gdb_udp_session_nonce(const struct gdb_udp_auth *a, uint32_t ip, uint16_t port,
                           uint8_t nonce[GDB_UDP_NONCE_BYTES])
{
    /* "gdb" in front keeps these apart from the UDP shell's tokens should a secret ever be shared. */
    uint8_t message[3 + 4 + 2] = { 'g', 'd', 'b' };
    for (int i = 0; i < 4; i++)
        message[3 + i] = (uint8_t)(ip >> (24 - 8 * i));
    message[7] = (uint8_t)(port >> 8);
    message[8] = (uint8_t)port;
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(a->service.secret, sizeof a->service.secret, message, sizeof message, mac);
    memcpy(nonce, mac, GDB_UDP_NONCE_BYTES);
}

static void counted_nonce(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, uint8_t nonce[GDB_UDP_NONCE_BYTES])
{
    a->counts.macs++;
    gdb_udp_session_nonce(a, ip, port, nonce);
}

static bool has_kind(const uint8_t *data, size_t len, char kind)
{
    return len > GDB_UDP_MAGIC_LEN && memcmp(data, GDB_UDP_MAGIC, GDB_UDP_MAGIC_LEN) == 0 &&
           data[GDB_UDP_MAGIC_LEN] == (uint8_t)kind;
}

bool gdb_udp_is_hello(const uint8_t *data, size_t len)
{
    return len == GDB_UDP_HELLO_LEN && has_kind(data, len, GDB_UDP_KIND_HELLO);
}

static enum gdb_udp_verdict answer_hello(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, const uint8_t *data,
                                         size_t len, const uint8_t **inner, size_t *inner_len)
{
    /* Only a whole hello: the answer's size keeps to the budget for exactly that length (asserted above). */
    if (len != GDB_UDP_HELLO_LEN) {
        a->counts.plain++;
        return GDB_UDP_DROP;
    }
    uint8_t *out = a->answer;
    size_t n = 0;
    memcpy(out, GDB_UDP_MAGIC, GDB_UDP_MAGIC_LEN);
    n += GDB_UDP_MAGIC_LEN;
    out[n++] = GDB_UDP_KIND_NONCE;
    memcpy(out + n, data + GDB_UDP_MAGIC_LEN + 1, GDB_UDP_NONCE_BYTES);
    n += GDB_UDP_NONCE_BYTES;
    counted_nonce(a, ip, port, out + n);
    n += GDB_UDP_NONCE_BYTES;
    put_u64(out + n, a->rx_floor);
    n += 8;
    put_u64(out + n, a->tx_counter);
    n += 8;
    counted_hmac(a, a->service.key, a->service.key_len, out, n, out + n);
    n += GDB_UDP_MAC_BYTES;
    a->counts.hellos++;
    *inner = out;
    *inner_len = n;
    return GDB_UDP_REPLY;
}

enum gdb_udp_verdict gdb_udp_auth_open(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, const uint8_t *data,
                                       size_t len, const uint8_t **inner, size_t *inner_len)
{
    if (a->insecure) {
        if (len > GDB_UDP_INNER_MAX)
            return GDB_UDP_DROP;
        a->counts.accepted++;
        *inner = data;
        *inner_len = len;
        return GDB_UDP_ACCEPT_RAW;
    }
    if (has_kind(data, len, GDB_UDP_KIND_HELLO))
        return answer_hello(a, ip, port, data, len, inner, inner_len);
    if (!has_kind(data, len, GDB_UDP_KIND_DATA) || len < GDB_UDP_KEYED_OVERHEAD ||
        len - GDB_UDP_KEYED_OVERHEAD > GDB_UDP_INNER_MAX) {
        a->counts.plain++;
        return GDB_UDP_DROP;
    }
    const uint8_t *nonce = data + GDB_UDP_MAGIC_LEN + 1;
    uint8_t want[GDB_UDP_NONCE_BYTES];
    counted_nonce(a, ip, port, want);
    if (!equal_in_constant_time(want, nonce, GDB_UDP_NONCE_BYTES)) {
        a->counts.bad_nonce++;
        return GDB_UDP_DROP;
    }
    size_t body = len - GDB_UDP_MAC_BYTES;
    uint8_t mac[GDB_UDP_MAC_BYTES];
    counted_hmac(a, a->service.key, a->service.key_len, data, body, mac);
    if (!equal_in_constant_time(mac, data + body, GDB_UDP_MAC_BYTES)) {
        a->counts.bad_mac++;
        return GDB_UDP_DROP;
    }
    uint64_t counter = get_u64(data + GDB_UDP_MAGIC_LEN + 1 + GDB_UDP_NONCE_BYTES);
    if (counter <= a->rx_floor) {
        a->counts.replayed++;
        return GDB_UDP_DROP;
    }
    a->rx_floor = counter;
    a->spoken_to = true;
    a->counts.accepted++;
    *inner = data + GDB_UDP_HEAD_LEN;
    *inner_len = body - GDB_UDP_HEAD_LEN;
    return GDB_UDP_ACCEPT;
}

size_t gdb_udp_auth_seal(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, const uint8_t *inner, size_t len,
                         uint8_t *out, size_t cap)
{
    if (a->insecure) {
        if (len > cap)
            return 0;
        memcpy(out, inner, len);
        return len;
    }
    /* No datagram accepted yet, no one to answer: a KPG1 stub says nothing before it is spoken to. */
    if (!a->spoken_to || len > GDB_UDP_INNER_MAX || cap < len + GDB_UDP_KEYED_OVERHEAD)
        return 0;
    size_t n = 0;
    memcpy(out, GDB_UDP_MAGIC, GDB_UDP_MAGIC_LEN);
    n += GDB_UDP_MAGIC_LEN;
    out[n++] = GDB_UDP_KIND_REPLY;
    /* The nonce of the address it goes to, not of whoever spoke last: a key holder's datagram that the
     * transport then did not take (not the peer) must not turn the peer's replies into another session's. */
    counted_nonce(a, ip, port, out + n);
    n += GDB_UDP_NONCE_BYTES;
    put_u64(out + n, ++a->tx_counter);
    n += 8;
    memcpy(out + n, inner, len);
    n += len;
    counted_hmac(a, a->service.key, a->service.key_len, out, n, out + n);
    return n + GDB_UDP_MAC_BYTES;
}
