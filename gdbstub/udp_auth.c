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

/* Whether ip:port is the open session's peer: its datagrams are judged under that session's generation and
 * floor, everyone else's as a newcomer's (the next generation, a fresh floor). */
static bool is_session_peer(const struct gdb_udp_auth *a, uint32_t ip, uint16_t port)
{
    return a->spoken_to && a->peer_ip == ip && a->peer_port == port;
}

void gdb_udp_session_nonce(const struct gdb_udp_auth *a, uint32_t ip, uint16_t port,
                           uint8_t nonce[GDB_UDP_NONCE_BYTES])
{
    /* "gdb" in front keeps these apart from the UDP shell's tokens should a secret ever be shared. The
     * generation makes a session's nonce its own: once it has ended, nothing sealed for it opens again. */
    uint64_t generation = is_session_peer(a, ip, port) ? a->session_generation : a->generation;
    uint8_t message[3 + 4 + 2 + 8] = { 'g', 'd', 'b' };
    for (int i = 0; i < 4; i++)
        message[3 + i] = (uint8_t)(ip >> (24 - 8 * i));
    message[7] = (uint8_t)(port >> 8);
    message[8] = (uint8_t)port;
    put_u64(message + 9, generation);
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(a->service.secret, sizeof a->service.secret, message, sizeof message, mac);
    memcpy(nonce, mac, GDB_UDP_NONCE_BYTES);
}

static void counted_nonce(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, uint8_t nonce[GDB_UDP_NONCE_BYTES])
{
    a->counts.macs++;
    gdb_udp_session_nonce(a, ip, port, nonce);
}

/* The floor a datagram from ip:port must rise above: its session's, or a newcomer's fresh one (0). */
static uint64_t floor_of(const struct gdb_udp_auth *a, uint32_t ip, uint16_t port)
{
    return is_session_peer(a, ip, port) ? a->rx_floor : 0;
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
    put_u64(out + n, floor_of(a, ip, port));
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
    a->opened.valid = false; /* only the datagram just opened can be committed */
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
    if (counter <= floor_of(a, ip, port)) {
        a->counts.replayed++;
        return GDB_UDP_DROP;
    }
    /* Not acted on yet: the floor rises only if the transport commits it (gdb_udp_auth_commit). Raising it
     * here let any holder of its own nonce, not the peer, push one shared floor to 2^64-1 for the boot. */
    a->opened.valid = true;
    a->opened.ip = ip;
    a->opened.port = port;
    a->opened.counter = counter;
    a->counts.accepted++;
    *inner = data + GDB_UDP_HEAD_LEN;
    *inner_len = body - GDB_UDP_HEAD_LEN;
    return GDB_UDP_ACCEPT;
}

void gdb_udp_auth_commit(struct gdb_udp_auth *a)
{
    if (!a->opened.valid)
        return; /* nothing opened (a hello, a drop, the insecure mode), or already committed */
    a->opened.valid = false;
    if (!is_session_peer(a, a->opened.ip, a->opened.port)) {
        /* A newcomer's datagram, sealed under the next generation, starts the session that generation names;
         * newcomers from now on are judged under the one after it, so the ended session's nonce (and what a
         * newcomer was told before) opens nothing any more. */
        a->spoken_to = true;
        a->peer_ip = a->opened.ip;
        a->peer_port = a->opened.port;
        a->session_generation = a->generation++;
    }
    a->rx_floor = a->opened.counter;
}

void gdb_udp_auth_end_session(struct gdb_udp_auth *a)
{
    /* Its peer becomes a newcomer, judged under the next generation: what it sealed for the session ended
     * here does not open again, and whoever comes next starts from a fresh floor. The newcomers' generation
     * moves on too: a datagram another sender sealed while this session ran (the transport dropped it, not the
     * peer's, without opening it) is not replayed into the next session. A relay told that nonce asks again. */
    a->generation++;
    a->spoken_to = false;
    a->rx_floor = 0;
    a->opened.valid = false;
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
    /* Only to the session's peer, once a datagram of it has been acted on: a KPG1 stub says nothing before
     * it is spoken to, and nothing to an address whose session this is not. */
    if (!is_session_peer(a, ip, port) || len > GDB_UDP_INNER_MAX || cap < len + GDB_UDP_KEYED_OVERHEAD)
        return 0;
    size_t n = 0;
    memcpy(out, GDB_UDP_MAGIC, GDB_UDP_MAGIC_LEN);
    n += GDB_UDP_MAGIC_LEN;
    out[n++] = GDB_UDP_KIND_REPLY;
    /* The session's nonce (the peer's, under its generation), not of whoever spoke last: a key holder's
     * datagram that the transport then did not take must not turn the peer's replies into another session's. */
    counted_nonce(a, ip, port, out + n);
    n += GDB_UDP_NONCE_BYTES;
    put_u64(out + n, ++a->tx_counter);
    n += 8;
    memcpy(out + n, inner, len);
    n += len;
    counted_hmac(a, a->service.key, a->service.key_len, out, n, out + n);
    return n + GDB_UDP_MAC_BYTES;
}
