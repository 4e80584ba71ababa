/* tests/unit/test_tcp_isn.c: kernel/net/lwip/tcp_isn.c -- RFC 6528's numbers: one 4-tuple's differs across
 * secrets and across ports (either end's) and addresses, the same inputs give the same number, and it advances
 * with the 4-microsecond clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/net/lwip/tcp_isn.h"
#include "unit_main.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static uint8_t secret_a[SHA256_DIGEST_SIZE], secret_b[SHA256_DIGEST_SIZE];

static int setup(void **state)
{
    (void)state;
    memset(secret_a, 0xa5, sizeof secret_a);
    memset(secret_b, 0xa5, sizeof secret_b);
    secret_b[31] ^= 1; /* one bit apart */
    return 0;
}

static uint32_t isn(const uint8_t *secret, uint16_t lport, uint16_t rport, uint64_t ns)
{
    return tcp_isn(secret, IP(10, 0, 2, 15), lport, IP(10, 0, 2, 2), rport, ns);
}

static void test_the_same_inputs_give_the_same_number(void **state)
{
    (void)state;
    assert_int_equal(isn(secret_a, 6060, 40000, 123456789), isn(secret_a, 6060, 40000, 123456789));
}

static void test_it_differs_across_secrets(void **state)
{
    (void)state;
    assert_int_not_equal(isn(secret_a, 6060, 40000, 0), isn(secret_b, 6060, 40000, 0));
}

static void test_it_differs_across_ports_and_addresses(void **state)
{
    (void)state;
    uint32_t base = isn(secret_a, 6060, 40000, 0);
    assert_int_not_equal(base, isn(secret_a, 6060, 40001, 0));
    assert_int_not_equal(base, isn(secret_a, 6061, 40000, 0));
    assert_int_not_equal(base, isn(secret_a, 40000, 6060, 0)); /* the ends swapped */
    assert_int_not_equal(base, tcp_isn(secret_a, IP(10, 0, 2, 15), 6060, IP(10, 0, 2, 3), 40000, 0));
    assert_int_not_equal(base, tcp_isn(secret_a, IP(10, 0, 2, 16), 6060, IP(10, 0, 2, 2), 40000, 0));
    /* Successive client ports do not give successive numbers a forger could step through. */
    uint32_t next = isn(secret_a, 6060, 40001, 0);
    assert_true(next - base > 1000000 || base - next > 1000000);
}

static void test_it_advances_with_the_clock(void **state)
{
    (void)state;
    uint32_t at0 = isn(secret_a, 6060, 40000, 0);
    assert_int_equal(isn(secret_a, 6060, 40000, 3999), at0);       /* within one 4 us tick */
    assert_int_equal(isn(secret_a, 6060, 40000, 4000), at0 + 1);   /* one tick */
    assert_int_equal(isn(secret_a, 6060, 40000, 4000000000ull), at0 + 1000000); /* 4 s */
    /* The clock wraps at 32 bits of ticks, as the numbers do. */
    assert_int_equal(isn(secret_a, 6060, 40000, 4000ull << 32), at0);
}

UNIT_MAIN(setup, NULL,
          test_the_same_inputs_give_the_same_number, test_it_differs_across_secrets,
          test_it_differs_across_ports_and_addresses, test_it_advances_with_the_clock)
