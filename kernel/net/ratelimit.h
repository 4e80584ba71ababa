/* kernel/net/ratelimit.h: how often a UDP service answers -- token buckets (struct token_bucket, one budget on its
 * own, as the gdb transport's hello answers use), and the UDP shell's set: a token bucket per source address,
 * plus one shared bucket over all of them, so that a flood (or a client in a loop) costs the network task a
 * bounded number of replies per second and cannot turn the kernel into a reflector. A request over the limit
 * is dropped unanswered and counted.
 *
 * The `udpsh.rate=N` kernel option: N requests per second per sender, bursts of up to N; the shared bucket
 * takes RATELIMIT_SHARED_FACTOR times that, so a sender rotating addresses gains little; 0 turns the limit
 * off. Pure logic over a caller-supplied clock (nanoseconds), so the host tests drive time. One owner (the
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
    bool used;
    struct token_bucket bucket;
};

struct ratelimit {
    uint32_t per_second; /* 0: unlimited */
    struct token_bucket shared;
    struct ratelimit_sender senders[RATELIMIT_SENDERS];
};

/* Starts every bucket full at now_ns. */
void ratelimit_init(struct ratelimit *rl, uint32_t per_second, int64_t now_ns);

/* True when a request from ip at now_ns is within the limit (and takes its token from both buckets); false
 * when it must be dropped (and takes nothing). */
bool ratelimit_allow(struct ratelimit *rl, uint32_t ip, int64_t now_ns);

#endif
