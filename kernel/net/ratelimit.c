/* kernel/net/ratelimit.c: token buckets (kernel/net/ratelimit.h) -- one alone, and the UDP shell's set: one per
 * remembered validated sender, one shared by all of them, one for token answers to everyone else. */
#include "kernel/net/ratelimit.h"

#include <stddef.h>

#define UNITS_PER_REQUEST 1000000000ull /* 10^9: at rate R, R units a nanosecond refill one request per 1/R s */

void token_bucket_init(struct token_bucket *b, uint32_t rate, int64_t now_ns)
{
    b->credit = (uint64_t)rate * UNITS_PER_REQUEST;
    b->last_ns = now_ns;
}

/* Adds the credit earned since the last look, capped at one second's worth (the burst). A clock reading
 * behind the last one earns nothing and is not remembered (so the time after it is not paid twice); a long
 * gap is cut to a second before multiplying, so nothing overflows. */
static void bucket_refill(struct token_bucket *b, uint32_t rate, int64_t now_ns)
{
    uint64_t cap = (uint64_t)rate * UNITS_PER_REQUEST;
    if (now_ns > b->last_ns) {
        uint64_t elapsed = (uint64_t)(now_ns - b->last_ns);
        if (elapsed > UNITS_PER_REQUEST)
            elapsed = UNITS_PER_REQUEST;
        b->credit += elapsed * rate;
        if (b->credit > cap)
            b->credit = cap;
        b->last_ns = now_ns;
    }
}

bool token_bucket_take(struct token_bucket *b, uint32_t rate, int64_t now_ns)
{
    bucket_refill(b, rate, now_ns);
    if (b->credit < UNITS_PER_REQUEST)
        return false;
    b->credit -= UNITS_PER_REQUEST;
    return true;
}

void ratelimit_init(struct ratelimit *rl, uint32_t per_second, int64_t now_ns)
{
    if (per_second > RATELIMIT_MAX)
        per_second = RATELIMIT_MAX;
    rl->per_second = per_second;
    token_bucket_init(&rl->shared, per_second * RATELIMIT_SHARED_FACTOR, now_ns);
    token_bucket_init(&rl->unvalidated, per_second, now_ns);
    for (size_t i = 0; i < RATELIMIT_SENDERS; i++)
        rl->senders[i].used = false;
}

/* The sender's slot: its own, else an unused one, else the one seen longest ago, started full. A forgotten
 * sender coming back starts full again -- which is why the shared bucket exists. */
static struct ratelimit_sender *sender_slot(struct ratelimit *rl, uint32_t ip, uint16_t port, int64_t now_ns)
{
    struct ratelimit_sender *unused = 0, *oldest = 0;
    for (size_t i = 0; i < RATELIMIT_SENDERS; i++) {
        struct ratelimit_sender *s = &rl->senders[i];
        if (!s->used) {
            if (!unused)
                unused = s;
        } else if (s->ip == ip && s->port == port) {
            return s;
        } else if (!oldest || s->bucket.last_ns < oldest->bucket.last_ns) {
            oldest = s;
        }
    }
    struct ratelimit_sender *victim = unused ? unused : oldest;
    victim->used = true;
    victim->ip = ip;
    victim->port = port;
    token_bucket_init(&victim->bucket, rl->per_second, now_ns);
    return victim;
}

bool ratelimit_allow(struct ratelimit *rl, uint32_t ip, uint16_t port, int64_t now_ns)
{
    if (rl->per_second == 0)
        return true;
    struct ratelimit_sender *s = sender_slot(rl, ip, port, now_ns);
    bucket_refill(&s->bucket, rl->per_second, now_ns);
    bucket_refill(&rl->shared, rl->per_second * RATELIMIT_SHARED_FACTOR, now_ns);
    if (s->bucket.credit < UNITS_PER_REQUEST || rl->shared.credit < UNITS_PER_REQUEST)
        return false;
    s->bucket.credit -= UNITS_PER_REQUEST;
    rl->shared.credit -= UNITS_PER_REQUEST;
    return true;
}

bool ratelimit_allow_unvalidated(struct ratelimit *rl, int64_t now_ns)
{
    return rl->per_second == 0 || token_bucket_take(&rl->unvalidated, rl->per_second, now_ns);
}
