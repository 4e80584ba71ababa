/* gdbstub/udp_auth.h: the seam between the gdb UDP transport (gdbstub/udp.c) and the decision
 * which datagrams to the gdb port are gdb's and how ours are wrapped. Three modes, one format for two of them:
 *   keyed     udpsh.key= given: the KPG1 datagrams below, MAC under that key.
 *   plain     no key (the default): the same KPG1 datagrams, MAC under the empty key. The MAC proves nothing
 *             then; the session nonce does: only a sender that receives at its address learns it, so a
 *             forger who cannot receive there is refused as in the keyed mode.
 *   insecure  gdb.udp.insecure, no key: a datagram's payload is the gdb bytes themselves, as gdb's own
 *             `target remote udp:` sends them (GDB_UDP_ACCEPT_RAW: no sender is ever proven).
 * The host relay scripts/kprof-gdb-relay seals and opens the other end in plain and keyed modes. The
 * transport has already applied the UDP shell's allowlist and its one-peer rule before it calls gdb_udp_open.
 *
 * The KPG1 datagram (docs/gdb.md "Who can attach"); integers big-endian, MAC = HMAC-SHA-256(key, every byte
 * before it), key empty in the plain mode:
 *
 *   hello  relay -> kernel  "KPG1" 'h' client_nonce[16]                                            21 bytes
 *   nonce  kernel -> relay  "KPG1" 'n' client_nonce[16] session_nonce[16] rx_floor u64 tx_from u64 MAC[32]
 *   data   relay -> kernel  "KPG1" 'd' session_nonce[16] counter u64 gdb-bytes MAC[32]
 *   reply  kernel -> relay  "KPG1" 'r' session_nonce[16] counter u64 gdb-bytes MAC[32]
 *
 *   session_nonce  the first 128 bits of HMAC-SHA-256(boot secret, "gdb", ip, port, generation u64): only a
 *                  sender that receives at ip:port learns it (the nonce answer goes there), and it changes with
 *                  every boot and every session, so nothing recorded in an earlier boot or an ended session
 *                  opens. The session's peer is told (and judged under) its session's generation; every other
 *                  address, a newcomer, the next one -- which becomes a session's when the transport commits a
 *                  newcomer's datagram (it attaches), and moves on when a session ends. So a relay's nonce
 *                  stops working whenever a session ends or begins (its own or another's): it asks again (the
 *                  relay re-hellos after unanswered tries, as after a reboot). The answer to a hello is 85
 *                  bytes against 21 (within udpsh's 3x budget, headers counted), and MACed, so the relay knows
 *                  it came from a key holder; client_nonce ties it to the hello it answers. It changes no state.
 *   counter        strictly rising per direction: the kernel opens a data datagram only above its session's
 *                  floor (rx_floor: the last counter of that session acted on; a newcomer's floor is 0), and
 *                  the floor rises only when the transport commits the datagram -- it acts on it: the peer's,
 *                  or the newcomer's that attaches it; not a repeat it drops, not a non-peer's it ignores. So a
 *                  counter of 2^64-1 from any holder of its own nonce locks out at most its own session, which
 *                  ends (and its floor with it) when the transport forgets that peer (it detaches, or another
 *                  attaches once it is idle). Replies are numbered above every earlier one of the boot
 *                  (tx_from: the relay takes replies only above it). Replays and duplicates are dropped; a
 *                  reordered datagram is dropped too, which gdb's ack and the relay's retransmission make
 *                  harmless. The relay picks counters from its clock, above the rx_floor its answer states.
 *   'd' / 'r'      the direction is in the MACed bytes, so a reply reflected at the kernel opens as nothing.
 *
 * Keyed or plain, nothing unproven has any effect: a raw, truncated, forged, replayed or wrong-key datagram
 * is dropped unanswered (no stop, no peer claimed, no floor moved); a hello (exactly GDB_UDP_HELLO_LEN bytes)
 * gets only its nonce answer, which changes no state. Every length is checked before any MAC is computed. A
 * datagram opened but not committed changes no session state either: it may open again (the same sender's own bytes,
 * which the transport judges again as it did), until its session's floor or generation passes it.
 *
 * Contract, for every implementation:
 *  - Pure over its arguments and its own static state; no locks, no allocation, no printing, no clock: it
 *    runs with every CPU stopped, in interrupt context on a timer tick and in the network task, never two at
 *    once (the transport serialises its callers).
 *  - gdb_udp_open(ip, port, data, len, &inner, &inner_len): data/len is one whole UDP payload (len may be 0;
 *    data is then still a valid pointer) from ip:port (host order). ACCEPT sets *inner and *inner_len to the
 *    gdb remote-protocol bytes it carries -- a range inside data, possibly empty -- which the transport feeds
 *    to the stub in order; REPLY sets them to a payload (static storage, valid until the next call) that the
 *    transport sends back to ip:port as it is -- not sealed, not given to the stub, no peer claimed by it;
 *    ACCEPT_RAW (insecure mode only) is ACCEPT from a sender nothing proves: the transport holds it to the
 *    rules for unproven senders (gdbstub/udp.h). DROP means the datagram is not to be seen at all (forged,
 *    replayed, malformed), and *inner / *inner_len are left unchanged. Opening changes no session state: a
 *    datagram may be opened and then not used (not the peer's, junk, a repeat the transport drops).
 *  - gdb_udp_commit(): the datagram the last gdb_udp_open accepted is acted on (it reached the stub, attached
 *    its sender, or had an answer sent again): its session's floor rises to its counter, and a newcomer's
 *    starts its session (replies may go to it). Called at most once per open, before anything is sealed for
 *    it; after a DROP, a REPLY or in the insecure mode it does nothing.
 *  - gdb_udp_seal(ip, port, inner, len, out, cap): wraps len (0 .. GDB_UDP_INNER_MAX) bytes of stub output
 *    into the payload of one datagram to ip:port, the peer (KPG1: under its session's nonce, and only to
 *    the session's peer once a datagram of it is committed: a KPG1 stub says nothing before it is spoken
 *    to), written to out (cap bytes of room; out never overlaps inner). Returns the payload's length, 0 when
 *    it cannot (cap too small, not the session's peer): the transport then sends nothing. cap is at least
 *    len + GDB_UDP_SEAL_OVERHEAD whenever the transport calls it with len <= GDB_UDP_INNER_MAX.
 *  - gdb_udp_auth_reset(): the transport forgets its peer (the session ends): the session's floor goes, the
 *    newcomers' generation moves on, and its peer is a newcomer (what it sealed before opens nothing any more).
 *  - gdb_udp_auth_start(): once, at boot in task context, before the first gdb_udp_open: reads udpsh.key=
 *    and draws the boot secret (logging one line). Without it the first gdb_udp_open starts it silently.
 *  - gdb_udp_auth_report(out): `net`'s "gdb udp auth:" line (gdbstub/udp_nic.c prints it). */
#ifndef GDBSTUB_UDP_AUTH_H
#define GDBSTUB_UDP_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"
#include "kernel/net/keyed_service.h"
#include "kernel/net/allowlist.h" /* the 3x budget every UDP service keeps, a hello's answer too */

/* The most gdb bytes one datagram carries either way: a whole packet of the stub's largest PacketSize
 * (gdbstub/packet.h GDB_PACKET_SIZE) with its `$`, `#`, checksum and an ack in front, and room to spare. */
#define GDB_UDP_INNER_MAX 65344
/* What sealing may add around the gdb bytes (a keyed header and MAC). */
#define GDB_UDP_SEAL_OVERHEAD 64

enum gdb_udp_verdict { GDB_UDP_ACCEPT, GDB_UDP_DROP, GDB_UDP_REPLY, GDB_UDP_ACCEPT_RAW };

enum gdb_udp_verdict gdb_udp_open(uint32_t ip, uint16_t port, const uint8_t *data, size_t len,
                                  const uint8_t **inner, size_t *inner_len);
size_t gdb_udp_seal(uint32_t ip, uint16_t port, const uint8_t *inner, size_t len, uint8_t *out, size_t cap);
void gdb_udp_commit(void);
void gdb_udp_auth_reset(void);
void gdb_udp_auth_start(void);
/* Whether data (len bytes) is a KPG1 hello of the right length: the transport spends a hello token on it
 * before gdb_udp_open computes its answer. */
bool gdb_udp_is_hello(const uint8_t *data, size_t len);
/* One line for `net`: keyed or not, and what was accepted and refused. */
struct sink;
void gdb_udp_auth_report(struct sink *out);

/* ---- the keyed format's pure logic (gdbstub/udp_auth.c), over explicit state, host-tested ---- */

#define GDB_UDP_MAGIC "KPG1"
#define GDB_UDP_MAGIC_LEN 4
#define GDB_UDP_NONCE_BYTES 16
#define GDB_UDP_MAC_BYTES SHA256_DIGEST_SIZE
#define GDB_UDP_KIND_HELLO 'h'
#define GDB_UDP_KIND_NONCE 'n'
#define GDB_UDP_KIND_DATA 'd'
#define GDB_UDP_KIND_REPLY 'r'
#define GDB_UDP_HELLO_LEN (GDB_UDP_MAGIC_LEN + 1 + GDB_UDP_NONCE_BYTES)
#define GDB_UDP_NONCE_LEN (GDB_UDP_MAGIC_LEN + 1 + 2 * GDB_UDP_NONCE_BYTES + 8 + 8 + GDB_UDP_MAC_BYTES)
#define GDB_UDP_HEAD_LEN (GDB_UDP_MAGIC_LEN + 1 + GDB_UDP_NONCE_BYTES + 8)
#define GDB_UDP_KEYED_OVERHEAD (GDB_UDP_HEAD_LEN + GDB_UDP_MAC_BYTES)

struct gdb_udp_auth_counts {
    uint64_t accepted;    /* opened (committed or not) */
    uint64_t hellos;      /* answered with a nonce */
    uint64_t plain;       /* no magic, a kind the kernel does not take, truncated, a hello not 21 bytes */
    uint64_t bad_nonce;   /* not this address's nonce in this boot */
    uint64_t bad_mac;
    uint64_t replayed;    /* counter not above the last accepted */
    uint64_t macs;        /* HMACs computed (nonces and MACs): what a forger can make the kernel spend */
};

struct gdb_udp_auth {
    struct keyed_service service;              /* udpsh.key= (keyed or not) and the nonce secret */
    uint64_t generation;                       /* a newcomer's: the next session's (its nonce is under it) */
    bool spoken_to;                            /* a session is open (a newcomer's datagram was committed) */
    uint32_t peer_ip;                          /* the session's peer, while spoken_to */
    uint16_t peer_port;
    uint64_t session_generation;               /* the session's, while spoken_to */
    uint64_t rx_floor;                         /* the session's last counter committed; 0 without one */
    uint64_t tx_counter;                       /* the last counter sealed (per boot) */
    struct {
        bool valid;                            /* the last open accepted it, and it is not committed yet */
        uint32_t ip;
        uint16_t port;
        uint64_t counter;
    } opened;
    bool insecure;                             /* gdb.udp.insecure and no key: raw gdb bytes both ways */
    uint8_t answer[GDB_UDP_NONCE_LEN];         /* the REPLY payload */
    struct gdb_udp_auth_counts counts;
};

/* key NULL (or key_len 0): plain KPG1 (MAC under the empty key). Otherwise key_len KEYED_KEY_MIN_BYTES ..
 * KEYED_KEY_MAX_BYTES (as keyed_key_parse gives it, kernel/net/keyed_service.h). */
void gdb_udp_auth_init(struct gdb_udp_auth *a, const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key,
                       size_t key_len);
/* gdb.udp.insecure: raw gdb bytes both ways, every datagram GDB_UDP_ACCEPT_RAW. Refused (false, nothing
 * changed) when a is keyed: a key is never silently thrown away. */
bool gdb_udp_auth_set_insecure(struct gdb_udp_auth *a);
/* The session nonce ip:port is told and judged under now: its session's generation if it is the session's
 * peer, else the next one (the secret's, so this boot's). */
void gdb_udp_session_nonce(const struct gdb_udp_auth *a, uint32_t ip, uint16_t port,
                           uint8_t nonce[GDB_UDP_NONCE_BYTES]);
/* gdb_udp_open and gdb_udp_seal over a. */
enum gdb_udp_verdict gdb_udp_auth_open(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, const uint8_t *data,
                                       size_t len, const uint8_t **inner, size_t *inner_len);
size_t gdb_udp_auth_seal(struct gdb_udp_auth *a, uint32_t ip, uint16_t port, const uint8_t *inner, size_t len,
                         uint8_t *out, size_t cap);
/* gdb_udp_commit and gdb_udp_auth_reset over a. */
void gdb_udp_auth_commit(struct gdb_udp_auth *a);
void gdb_udp_auth_end_session(struct gdb_udp_auth *a);

#endif
