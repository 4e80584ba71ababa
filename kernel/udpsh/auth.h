/* kernel/udpsh/auth.h: who the UDP shell believes, and how much it says to a sender it does not -- the
 * address-validation token, the optional request key, the replay check and the rule for what an unkeyed
 * request may run. docs/udp-shell.md is the reference (and the threat model); in short:
 *
 *   token    A datagram's source address proves nothing. Until a request repeats a token the kernel gave to
 *            its address and port, the only answer is one datagram "# udpsh token=<32 hex>\n", which costs at
 *            most NET_UDP_AMPLIFICATION times what the sender sent (bytes counted as on the wire: the UDP
 *            payload plus NET_UDP_HEADER_BYTES of IPv4 and UDP headers, both ways). The token is the first
 *            128 bits of HMAC-SHA-256(secret, address, port, time window): stateless, valid in the window it
 *            was made and the next.
 *   request  "token=<32 hex> LINE" or "token=<32 hex> id=<N> LINE" runs LINE; with a key (udpsh.key=HEX) every
 *            request must be "token=<32 hex> counter=<N> mac=<64 hex> LINE", the MAC being
 *            HMAC-SHA-256(key, "<token> <N> LINE") over exactly those bytes, and N above the last one accepted
 *            from that address.
 *   order    allowlist (the caller), shell-reply-looking (dropped), token; no good token: a token answer from
 *            the ONE shared unvalidated bucket (kernel/net/ratelimit.h), nothing else; a good token: the
 *            sender's own bucket (address and port), the length (before any MAC), a bad udpsh.key= (refuses
 *            everything), the MAC and counter, the repeat check, and the line runs.
 *   repeats  A request with the id (unkeyed) or counter (keyed) of the last request run for the same address and
 *            port is a repeat -- a client resending because no answer came: it is not run again. While the
 *            first still runs the repeat gets nothing (the answer is on its way); after, it gets the remembered
 *            answer (struct udpsh_remembered), or, when that was too long to keep, UDPSH_REPLY_NOT_REMEMBERED.
 *   expiry   A request runs under a token that expires at the end of the window after the one it was made in
 *            (udpsh_judgement.token_expires_ns): unkeyed, long sends to the sender itself stop then.
 *   unkeyed  Without a key only the commands that read run (udpsh_unkeyed_allows).
 *   bad key  A udpsh.key= that cannot be used (kernel/net/boot_secret.h: it does not parse, or the command line
 *            naming it was cut): every request with a good token gets UDPSH_REPLY_KEY_REFUSED.
 *   replies  A datagram that begins like a UDP shell's own final line ("# udpsh ", possibly after one
 *            newline) is dropped unanswered, so two shells never answer each other's answers.
 *
 * Pure logic over a caller-supplied clock and secret, so the host tests drive both. One owner (the network
 * task): no locks. */
#ifndef KERNEL_UDPSH_AUTH_H
#define KERNEL_UDPSH_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sha256.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/keyed_service.h"
#include "kernel/net/ratelimit.h"

#define UDPSH_TOKEN_BYTES 16                    /* 128 bits of the MAC: unguessable, short enough for 3x */
#define UDPSH_TOKEN_HEX (2 * UDPSH_TOKEN_BYTES)
#define UDPSH_MAC_HEX (2 * SHA256_DIGEST_SIZE)
#define UDPSH_TOKEN_WINDOW_NS 30000000000ll     /* a token lives 30 to 60 s (by default; see below) */
/* udpsh.token_window_ms=: a shorter window, a test knob, so that what ends with a token (an unkeyed netload send
 * or profile stream to the asker) can be seen ending in seconds instead of a minute; never longer. */
#define UDPSH_TOKEN_WINDOW_MS_MIN 1000
#define UDPSH_TOKEN_WINDOW_MS_MAX 30000
#define UDPSH_KEYED_SENDERS 16                  /* addresses whose last counter is remembered */
#define UDPSH_REMEMBERED 4                      /* senders (address and port) whose last answer is kept */
#define UDPSH_REMEMBERED_BYTES 4096             /* the longest answer kept, its datagrams and trailer together */
#define UDPSH_REMEMBERED_DATAGRAMS 8
/* The longest datagram a request can be: the longest prefix (token, counter, mac), a line, "\r\n". */
#define UDPSH_REQUEST_MAX (6 + UDPSH_TOKEN_HEX + 9 + 20 + 5 + UDPSH_MAC_HEX + 1 + UDPSH_LINE_MAX + 2)

#define UDPSH_TOKEN_PREFIX "# udpsh token="
/* The token reply: UDPSH_TOKEN_PREFIX, the token in lowercase hex, a newline. */
#define UDPSH_TOKEN_REPLY_LEN (sizeof UDPSH_TOKEN_PREFIX - 1 + UDPSH_TOKEN_HEX + 1)

/* The refusals a request with a good token may get (one datagram each, like those of kernel/udpsh/wire.h). */
#define UDPSH_REPLY_NEEDS_MAC "# udpsh error: this shell takes keyed requests only (udpsh.key)\n"
#define UDPSH_REPLY_BAD_MAC "# udpsh error: bad mac\n"
#define UDPSH_REPLY_REPLAYED "# udpsh error: counter not above the last one accepted (a replay?)\n"
#define UDPSH_REPLY_SENDERS_FULL "# udpsh error: too many keyed senders at once; try again in a minute\n"
#define UDPSH_REPLY_NEEDS_KEY "# udpsh error: that command needs a keyed request (udpsh.key)\n"
#define UDPSH_REPLY_KEY_REFUSED "# udpsh error: udpsh.key= cannot be used; the UDP shell refuses every request\n"
#define UDPSH_REPLY_NOT_REMEMBERED "# udpsh error: a repeat of a request whose answer was too long to keep; " \
                                   "not run twice (send it again as a new request)\n"

struct udpsh_keyed_sender {
    uint32_t ip;
    bool used;
    uint64_t counter; /* the last accepted */
    int64_t last_ns;  /* when */
};

struct udpsh_auth_counts {
    uint64_t tokens_sent;     /* token replies to requests without a good token */
    uint64_t over_budget;     /* ... that would have cost more than 3x, so went unsent */
    uint64_t replies_ignored; /* datagrams that look like a UDP shell's reply */
    uint64_t no_mac;          /* keyed shell, request without a MAC */
    uint64_t bad_mac;
    uint64_t replayed;        /* counter not above the last */
    uint64_t senders_full;
    uint64_t needs_key;       /* unkeyed requests for a command that changes the machine (counted by the caller) */
    uint64_t too_long;        /* a good token, and longer than any request can be: refused before any MAC */
    uint64_t unvalidated_limited; /* no good token, and the shared unvalidated bucket empty: no token answer */
    uint64_t validated_limited;   /* a good token, over its sender's (or all senders') rate */
    uint64_t key_refused;     /* good token, but udpsh.key= did not parse */
    uint64_t repeats;         /* repeats answered from the remembered answer */
    uint64_t repeats_running; /* repeats of the request still running: nothing sent */
    uint64_t repeats_lost;    /* repeats whose answer was too long to keep */
};

/* The last answer to one sender's request with an id, kept so a repeat is answered without running it again.
 * Written by the UDP shell task while the request runs (udpsh_remember_datagram) and read by the network task
 * only after (the caller's busy flag orders the two). */
struct udpsh_remembered {
    bool used;
    uint32_t ip;
    uint16_t port;
    bool keyed;
    uint64_t id;     /* the id (unkeyed) or counter (keyed) of the request */
    int64_t last_ns; /* when the request arrived: the least recent slot is reused first */
    bool too_long;   /* the answer did not fit: a repeat gets UDPSH_REPLY_NOT_REMEMBERED */
    uint16_t datagrams;
    uint16_t lens[UDPSH_REMEMBERED_DATAGRAMS];
    size_t used_bytes;
    char bytes[UDPSH_REMEMBERED_BYTES];
};

struct udpsh_auth {
    struct keyed_service service; /* udpsh.key= (keyed or not) and the token secret */
    struct udpsh_keyed_sender senders[UDPSH_KEYED_SENDERS];
    struct udpsh_auth_counts counts;
    struct ratelimit rate;        /* zeroed by udpsh_auth_init: no limit until ratelimit_init sets one */
    bool key_refused;             /* udpsh.key= was given and cannot be used: refuse every request */
    int64_t token_window_ns;      /* UDPSH_TOKEN_WINDOW_NS unless udpsh.token_window_ms= shortened it */
    struct udpsh_remembered remembered[UDPSH_REMEMBERED];
};

/* key NULL (or key_len 0): unkeyed. key_len must be KEYED_KEY_MIN_BYTES..KEYED_KEY_MAX_BYTES otherwise
 * (kernel/net/keyed_service.h: the key's grammar, and the set-up shared with the gdb transport). */
void udpsh_auth_init(struct udpsh_auth *a, const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key,
                     size_t key_len);

/* Shortens the token window to ms (UDPSH_TOKEN_WINDOW_MS_MIN..MAX); false, and nothing changed, outside that. */
bool udpsh_auth_set_token_window_ms(struct udpsh_auth *a, uint64_t ms);

/* True when data begins like the final line of a UDP shell's reply: "# udpsh ", possibly after one "\n". */
bool udpsh_looks_like_reply(const uint8_t *data, size_t len);


/* The token for ip:port in window (time_ns / UDPSH_TOKEN_WINDOW_NS). */
void udpsh_token(const struct udpsh_auth *a, uint32_t ip, uint16_t port, int64_t window,
                 uint8_t token[UDPSH_TOKEN_BYTES]);

/* The fields in front of a request's line. parse fails (false) on a datagram that starts "token=" but does
 * not go on as the grammar says; a datagram that does not start "token=" parses, with has_token false. */
struct udpsh_request_prefix {
    bool has_token;
    uint8_t token[UDPSH_TOKEN_BYTES];
    bool has_mac;
    uint64_t counter;
    size_t counter_at, counter_len; /* the counter's digits as sent (the MAC covers them so) */
    uint8_t mac[SHA256_DIGEST_SIZE];
    bool has_id;                    /* unkeyed "id=<N>": the client's number for this request, kept on resends */
    uint64_t id;
    size_t line_at;                 /* where the command line starts */
};
bool udpsh_prefix_parse(const uint8_t *data, size_t len, struct udpsh_request_prefix *p);

/* What to do with one datagram. */
enum udpsh_verdict {
    UDPSH_RUN,   /* line/line_len is the command line (still to be checked by udpsh_request_line) */
    UDPSH_REPLY, /* send reply (a token or a refusal) and run nothing */
    UDPSH_DROP,  /* answer nothing */
    UDPSH_REPEAT, /* a repeat of remembered's request: unless that still runs, send udpsh_remembered_replay */
};
struct udpsh_judgement {
    enum udpsh_verdict verdict;
    bool keyed; /* RUN: the request's MAC checked out under the key */
    bool has_id; /* RUN: the request has an id (unkeyed) or counter (keyed), so its answer can be remembered */
    uint64_t id;
    int64_t token_expires_ns; /* RUN: when the request's token stops being good */
    struct udpsh_remembered *remembered; /* REPEAT */
    const uint8_t *line;
    size_t line_len;
    const char *reply;
    size_t reply_len;
    char token_reply[UDPSH_TOKEN_REPLY_LEN + 1];
};

/* Judges a datagram from ip:port at now_ns (the caller has already applied the allowlist), in the order above,
 * counting what it refused. running: the remembered slot of the request still running, or NULL. A repeat of
 * that request whose token expired while it ran is judged REPEAT of it, not answered with a fresh token: the
 * client takes a fresh token for "start afresh", and a second run of (say) netload would begin while the first
 * one's answer was still on its way. Nothing is ever sent for it, so an expired token earns no bytes. */
void udpsh_auth_judge(struct udpsh_auth *a, uint32_t ip, uint16_t port, const uint8_t *data, size_t len,
                      int64_t now_ns, struct udpsh_remembered *running, struct udpsh_judgement *j);

/* Starts remembering the answer to the request j was judged RUN for (from ip:port, at now_ns): the sender's own
 * slot, else an unused one, else the least recent. NULL (nothing kept) for a request without an id. */
struct udpsh_remembered *udpsh_remember_start(struct udpsh_auth *a, uint32_t ip, uint16_t port,
                                             const struct udpsh_judgement *j, int64_t now_ns);
/* Keeps one datagram of the answer (r NULL: nothing); an answer that outgrows the slot is marked too long. */
void udpsh_remember_datagram(struct udpsh_remembered *r, const char *data, size_t len);
/* Sends a repeat its answer through emit: the remembered datagrams in order, or UDPSH_REPLY_NOT_REMEMBERED. */
void udpsh_remembered_replay(const struct udpsh_remembered *r, void (*emit)(void *arg, const char *data, size_t len),
                             void *arg);

/* Whether an unkeyed request may run line (NUL-terminated, as udpsh_request_line made it), from src_ip:
 * the commands that only read (help, profile, lscpu, ps, stacks, cpus, net -- not `net wedge` --, mem,
 * uptime), `netload sink` (it only receives), `netload send` to src_ip itself (a proven address flooding
 * itself), `profile stream` to src_ip itself (PORT alone, or src_ip:PORT) and `profile stream stop` (which
 * stops only a stream to the requester unkeyed: kernel/shell/cmd_profile_stream.c), an empty line, and any word
 * is_command says is no command (the shell then says so). */
bool udpsh_unkeyed_allows(const char *line, uint32_t src_ip, bool (*is_command)(const char *name));

#endif
