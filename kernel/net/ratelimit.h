/* kernel/net/ratelimit.h: how often a UDP service answers -- token buckets (struct token_bucket, one budget on its
 * own, as the gdb transport's hello answers use), and the UDP shell's set. A source address proves nothing, so
 * the set has two sides: every datagram that does not carry a good token (a validated sender's proof that it
 * receives at its address and port) draws on ONE small shared bucket, which only ever pays for token answers;
 * a validated sender draws on its own bucket, keyed by address AND port, plus one shared bucket over all
 * validated senders. A blind forger can only empty the unvalidated bucket: it cannot make a datagram count
 * against a validated sender's bucket (that needs the sender's token), nor push a validated sender out of the
 * table. A request over the limit is dropped unanswered and counted.
 *
 * The `udpsh.rate=N` kernel option: N requests per second per validated sender, bursts of up to N; the
 * validated senders' shared bucket takes RATELIMIT_SHARED_FACTOR times that; the unvalidated bucket takes N
 * (token answers, each within the 3x budget); 0 turns every limit off. Pure logic over a caller-supplied clock (nanoseconds), so the host tests drive time. One owner (the
 * network task): no locks. */
#ifndef KERNEL_NET_RATELIMIT_H
#define KERNEL_NET_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define RATELIMIT_DEFAULT 100     /* requests per second per sender, and the burst */
#define RATELIMIT_MAX 100000      /* the largest udpsh.rate= accepted */
#define RATELIMIT_SENDERS 16      /* senders remembered; the least recently seen is forgotten first */
#define RATELIMIT_SHARED_FACTOR 4 /* the shared bucket's rate and burst, in multiples of one sender's */

/* A bucket at rate R holds credit in units where one request costs 10^9 and each nanosecond adds R, so
 * refill is exact integer arithmetic however often it is checked (no remainder is ever rounded away). */
struct token_bucket {
    uint64_t credit;
    int64_t last_ns;
};

/* Starts b full: rate requests (the burst) at now_ns. */
void token_bucket_init(struct token_bucket *b, uint32_t rate, int64_t now_ns);
/* True when b, refilled at rate per second up to rate, holds one request at now_ns (and takes it); false when it
 * does not (and takes nothing). */
bool token_bucket_take(struct token_bucket *b, uint32_t rate, int64_t now_ns);

struct ratelimit_sender {
    uint32_t ip;
    uint16_t port;
    bool used;
    struct token_bucket bucket;
};

struct ratelimit {
    uint32_t per_second; /* 0: unlimited */
    struct token_bucket shared;      /* over every validated sender */
    struct token_bucket unvalidated; /* token answers to whoever has no good token */
    struct ratelimit_sender senders[RATELIMIT_SENDERS];
};

/* Starts every bucket full at now_ns. */
void ratelimit_init(struct ratelimit *rl, uint32_t per_second, int64_t now_ns);

/* True when a request from the validated sender ip:port at now_ns is within the limit (and takes its token from
 * its own bucket and the validated senders' shared one); false when it must be dropped (and takes nothing). The
 * caller has checked the request's token: only validated senders get a slot. */
bool ratelimit_allow(struct ratelimit *rl, uint32_t ip, uint16_t port, int64_t now_ns);

/* True when one more token answer to a sender without a good token fits the unvalidated bucket at now_ns (and
 * takes it). */
bool ratelimit_allow_unvalidated(struct ratelimit *rl, int64_t now_ns);

#endif
