/* tests/unit/test_ratelimit.c: kernel/net/ratelimit.c -- the UDP shell's per-sender and shared token buckets:
 * a burst of exactly the rate, refill to the exact request however finely time is sliced, senders (address
 * and port) kept apart, the least recently seen sender forgotten first, the shared bucket capping many
 * senders, the unvalidated bucket apart from all of them, time going backwards or jumping far, and 0 meaning
 * no limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernel/net/ratelimit.h"
#include "unit_main.h"

#define MS 1000000ll
#define SEC 1000000000ll
#define HOST(n) (0x0a000200u + (uint32_t)(n))
#define PORT 40000

static struct ratelimit rl;

/* How many of count back-to-back requests from ip at now pass. */
static unsigned passed(uint32_t ip, int64_t now, unsigned count)
{
    unsigned n = 0;
    for (unsigned i = 0; i < count; i++)
        n += ratelimit_allow(&rl, ip, PORT, now);
    return n;
}

static void test_burst_is_the_rate_then_nothing(void **state)
{
    (void)state;
    ratelimit_init(&rl, 10, 5 * SEC);
    assert_int_equal(passed(HOST(2), 5 * SEC, 25), 10);
    assert_false(ratelimit_allow(&rl, HOST(2), PORT, 5 * SEC));
}

static void test_refill_is_one_request_per_period(void **state)
{
    (void)state;
    ratelimit_init(&rl, 10, 0);
    assert_int_equal(passed(HOST(2), 0, 10), 10);
    /* 100 ms earns one request at 10/s; 99.999999 ms does not */
    assert_false(ratelimit_allow(&rl, HOST(2), PORT, 100 * MS - 1));
    assert_true(ratelimit_allow(&rl, HOST(2), PORT, 100 * MS));
    assert_false(ratelimit_allow(&rl, HOST(2), PORT, 100 * MS));
    /* a full second refills the whole burst, and no more */
    assert_int_equal(passed(HOST(2), 100 * MS + 5 * SEC, 30), 10);
}

static void test_fine_slices_of_time_lose_nothing(void **state)
{
    (void)state;
    /* asked every microsecond for a second at 100/s: each 10 ms earns exactly one */
    ratelimit_init(&rl, 100, 0);
    assert_int_equal(passed(HOST(2), 0, 100), 100);
    unsigned n = 0;
    for (int64_t t = 1000; t <= SEC; t += 1000)
        n += ratelimit_allow(&rl, HOST(2), PORT, t);
    assert_int_equal(n, 100);
}

static void test_senders_have_their_own_buckets(void **state)
{
    (void)state;
    ratelimit_init(&rl, 5, 0);
    assert_int_equal(passed(HOST(2), 0, 8), 5);
    assert_int_equal(passed(HOST(3), 0, 8), 5);
    assert_int_equal(passed(HOST(2), 0, 1), 0);
}

static void test_ports_of_one_address_have_their_own_buckets(void **state)
{
    (void)state;
    ratelimit_init(&rl, 5, 0);
    assert_int_equal(passed(HOST(2), 0, 8), 5);
    unsigned n = 0;
    for (int i = 0; i < 8; i++)
        n += ratelimit_allow(&rl, HOST(2), PORT + 1, 0);
    assert_int_equal(n, 5);
}

/* The flood the issue measured, in the pure logic: a thousand datagrams a second without a good token, from
 * rotating addresses and from the client's own address on other ports, empty the unvalidated bucket and
 * nothing else -- the validated client gets every one of its requests for a second through. */
static void test_an_unvalidated_flood_cannot_spend_a_validated_senders_bucket(void **state)
{
    (void)state;
    ratelimit_init(&rl, RATELIMIT_DEFAULT, 0);
    unsigned forged_passed = 0, client_passed = 0;
    for (int64_t t = 0; t < SEC; t += MS) {
        forged_passed += ratelimit_allow_unvalidated(&rl, t);
        if (t % (25 * MS) == 0)
            client_passed += ratelimit_allow(&rl, HOST(2), PORT, t);
    }
    assert_int_equal(client_passed, 40);
    /* the burst, then one per 10 ms refilled */
    assert_int_equal(forged_passed, RATELIMIT_DEFAULT + 99);
    assert_false(ratelimit_allow_unvalidated(&rl, SEC - MS));
}

static void test_the_longest_unseen_sender_is_forgotten_first(void **state)
{
    (void)state;
    /* 20/s: the shared bucket (80) has room for everything below, so only the per-sender buckets decide */
    ratelimit_init(&rl, 20, 0);
    /* senders 1 and 2 empty their buckets at t=0; 14 more fill the table at 2 ms; 1 is seen again at 1 ms */
    assert_int_equal(passed(HOST(1), 0, 20), 20);
    assert_int_equal(passed(HOST(2), 0, 20), 20);
    for (unsigned i = 3; i <= RATELIMIT_SENDERS; i++)
        assert_true(ratelimit_allow(&rl, HOST(i), PORT, 2 * MS));
    assert_false(ratelimit_allow(&rl, HOST(1), PORT, 1 * MS));
    /* a 17th sender evicts sender 2 (last seen at 0), not sender 1 (at 1 ms): 1 stays empty */
    assert_true(ratelimit_allow(&rl, HOST(100), PORT, 3 * MS));
    assert_false(ratelimit_allow(&rl, HOST(1), PORT, 3 * MS));
    /* sender 2 comes back forgotten, with a full bucket */
    assert_int_equal(passed(HOST(2), 3 * MS, 25), 20);
}

static void test_shared_bucket_caps_many_senders(void **state)
{
    (void)state;
    ratelimit_init(&rl, 3, 0);
    /* 16 senders of 3 each would be 48; the shared bucket lets through 4 * 3 */
    unsigned n = 0;
    for (unsigned i = 0; i < RATELIMIT_SENDERS; i++)
        n += passed(HOST(i), 0, 3);
    assert_int_equal(n, RATELIMIT_SHARED_FACTOR * 3);
    /* a request the shared bucket denied took nothing from its sender's: a quarter second refills the shared
     * bucket by 3 (12/s), and sender 15, denied 3 times, still has all 3 of its own */
    assert_int_equal(passed(HOST(RATELIMIT_SENDERS - 1), SEC / 4, 5), 3);
}

static void test_time_backwards_earns_nothing_and_long_gaps_do_not_overflow(void **state)
{
    (void)state;
    ratelimit_init(&rl, RATELIMIT_MAX, 10 * SEC);
    assert_int_equal(passed(HOST(2), 10 * SEC, RATELIMIT_MAX + 5), RATELIMIT_MAX);
    assert_false(ratelimit_allow(&rl, HOST(2), PORT, 9 * SEC));
    assert_false(ratelimit_allow(&rl, HOST(2), PORT, 9 * SEC + 5 * MS));
    /* a year later: one second's worth, no more */
    int64_t later = 10 * SEC + 365ll * 86400 * SEC;
    assert_int_equal(passed(HOST(2), later, RATELIMIT_MAX + 5), RATELIMIT_MAX);
}

static void test_rate_above_the_maximum_is_clamped(void **state)
{
    (void)state;
    ratelimit_init(&rl, 4000000000u, 0);
    assert_int_equal(rl.per_second, RATELIMIT_MAX);
}

static void test_zero_is_no_limit(void **state)
{
    (void)state;
    ratelimit_init(&rl, 0, 0);
    assert_int_equal(passed(HOST(2), 0, 100000), 100000);
}

static void test_one_bucket_alone_bursts_then_refills(void **state)
{
    (void)state;
    struct token_bucket b;
    token_bucket_init(&b, 4, 0);
    unsigned n = 0;
    for (int i = 0; i < 10; i++)
        n += token_bucket_take(&b, 4, 0);
    assert_int_equal(n, 4);
    assert_false(token_bucket_take(&b, 4, SEC / 4 - 1));
    assert_true(token_bucket_take(&b, 4, SEC / 4));
    assert_false(token_bucket_take(&b, 4, SEC / 4));
}

UNIT_MAIN(NULL, NULL,
          test_burst_is_the_rate_then_nothing, test_refill_is_one_request_per_period,
          test_fine_slices_of_time_lose_nothing, test_senders_have_their_own_buckets,
          test_ports_of_one_address_have_their_own_buckets,
          test_an_unvalidated_flood_cannot_spend_a_validated_senders_bucket,
          test_the_longest_unseen_sender_is_forgotten_first, test_shared_bucket_caps_many_senders,
          test_time_backwards_earns_nothing_and_long_gaps_do_not_overflow, test_rate_above_the_maximum_is_clamped,
          test_zero_is_no_limit, test_one_bucket_alone_bursts_then_refills)
