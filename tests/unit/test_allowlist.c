/* tests/unit/test_allowlist.c: kernel/net/allowlist.c -- the `udpsh.allow=` parser accepting exactly the
 * forms allowlist.h promises and refusing every other with a line naming the entry, matching by prefix from
 * /0 to /32, the local-subnet default and its fail-closed cases, the list written back out, and
 * net_peer_permitted, the one question every UDP service asks, over a faked command line, log and address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/cmdline.h"
#include "kernel/log.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/lib/sink.h"
#include "unit_main.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static struct allowlist parsed(const char *text)
{
    struct allowlist list;
    char error[ALLOWLIST_ERROR_MAX];
    error[0] = '\0';
    if (!allowlist_parse(text, &list, error, sizeof error))
        fail_msg("'%s' refused: %s", text, error);
    return list;
}

/* The list written back in option syntax. */
static const char *formatted(const struct allowlist *list)
{
    static char text[256];
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    allowlist_format(list, &bs.sink);
    return text;
}

static void expect_refused(const char *text, const char *want_error)
{
    struct allowlist list;
    memset(&list, 0x5a, sizeof list);
    struct allowlist before = list;
    char error[ALLOWLIST_ERROR_MAX];
    assert_false(allowlist_parse(text, &list, error, sizeof error));
    assert_string_equal(error, want_error);
    assert_null(strchr(error, '\n'));
    /* A refused list leaves the old one alone. */
    assert_memory_equal(&list, &before, sizeof list);
}

static void test_single_entries(void **state)
{
    (void)state;
    struct allowlist list = parsed("10.0.2.0/24");
    assert_int_equal(list.count, 1);
    assert_int_equal(list.entries[0].net, IP(10, 0, 2, 0));
    assert_int_equal(list.entries[0].mask, 0xffffff00u);
    assert_int_equal(list.entries[0].prefix, 24);

    list = parsed("192.168.1.7");
    assert_int_equal(list.count, 1);
    assert_int_equal(list.entries[0].net, IP(192, 168, 1, 7));
    assert_int_equal(list.entries[0].mask, 0xffffffffu);
    assert_int_equal(list.entries[0].prefix, 32);

    list = parsed("0.0.0.0/0");
    assert_int_equal(list.entries[0].net, 0);
    assert_int_equal(list.entries[0].mask, 0);

    list = parsed("255.255.255.255/32");
    assert_int_equal(list.entries[0].net, 0xffffffffu);
}

static void test_host_bits_are_masked(void **state)
{
    (void)state;
    struct allowlist list = parsed("10.0.2.15/24");
    assert_int_equal(list.entries[0].net, IP(10, 0, 2, 0));
    assert_string_equal(formatted(&list), "10.0.2.0/24");
    list = parsed("172.16.200.9/12");
    assert_string_equal(formatted(&list), "172.16.0.0/12");
    list = parsed("1.2.3.4/0");
    assert_string_equal(formatted(&list), "0.0.0.0/0");
}

static void test_eight_entries(void **state)
{
    (void)state;
    const char *text = "1.0.0.0/8,2.2.0.0/16,3.3.3.0/24,4.4.4.4,5.0.0.0/1,6.6.6.6/31,7.7.7.7/32,0.0.0.0/0";
    struct allowlist list = parsed(text);
    assert_int_equal(list.count, 8);
    assert_string_equal(formatted(&list),
                        "1.0.0.0/8,2.2.0.0/16,3.3.3.0/24,4.4.4.4/32,0.0.0.0/1,6.6.6.6/31,7.7.7.7/32,0.0.0.0/0");
}

/* What allowlist_permits must answer for one address. */
struct verdict {
    uint32_t ip;
    bool permitted;
};

/* Fails naming the address unless list answers each of the count verdicts as given. */
static void expect_verdicts(const struct allowlist *list, const struct verdict *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (allowlist_permits(list, v[i].ip) != v[i].permitted)
            fail_msg("%u.%u.%u.%u is %s, expected %s", v[i].ip >> 24, v[i].ip >> 16 & 0xff, v[i].ip >> 8 & 0xff,
                     v[i].ip & 0xff, v[i].permitted ? "refused" : "permitted", v[i].permitted ? "permitted" : "refused");
}

#define EXPECT_VERDICTS(list, ...)                                                                              \
    do {                                                                                                       \
        static const struct verdict verdicts_[] = { __VA_ARGS__ };                                             \
        expect_verdicts((list), verdicts_, sizeof verdicts_ / sizeof verdicts_[0]);                            \
    } while (0)

static void test_permits_by_prefix(void **state)
{
    (void)state;
    struct allowlist list = parsed("10.0.2.0/24,192.168.1.7");
    EXPECT_VERDICTS(&list, { IP(10, 0, 2, 2), true }, { IP(10, 0, 2, 0), true }, { IP(10, 0, 2, 255), true },
                    { IP(10, 0, 3, 2), false }, { IP(10, 0, 1, 255), false }, { IP(192, 168, 1, 7), true },
                    { IP(192, 168, 1, 6), false }, { IP(192, 168, 1, 8), false }, { 0, false },
                    { 0xffffffffu, false });
}

static void test_slash_zero_permits_everyone(void **state)
{
    (void)state;
    struct allowlist list = parsed("0.0.0.0/0");
    uint32_t addrs[] = {0, 1, IP(10, 0, 2, 2), IP(127, 0, 0, 1), IP(128, 0, 0, 0), 0xffffffffu};
    for (size_t i = 0; i < sizeof addrs / sizeof addrs[0]; i++)
        assert_true(allowlist_permits(&list, addrs[i]));
}

static void test_slash_thirty_two_permits_one(void **state)
{
    (void)state;
    struct allowlist list = parsed("127.0.0.1/32");
    EXPECT_VERDICTS(&list, { IP(127, 0, 0, 1), true }, { IP(127, 0, 0, 0), false }, { IP(127, 0, 0, 2), false },
                    { IP(255, 0, 0, 1), false });
    /* /31 is two addresses, /1 half the space. */
    list = parsed("10.0.0.5/31");
    EXPECT_VERDICTS(&list, { IP(10, 0, 0, 4), true }, { IP(10, 0, 0, 5), true }, { IP(10, 0, 0, 6), false });
    list = parsed("200.0.0.0/1");
    EXPECT_VERDICTS(&list, { IP(128, 0, 0, 0), true }, { IP(127, 255, 255, 255), false });
}

static void test_empty_list_permits_nobody(void **state)
{
    (void)state;
    struct allowlist list = {.count = 0};
    EXPECT_VERDICTS(&list, { IP(10, 0, 2, 2), false }, { 0, false });
    assert_string_equal(formatted(&list), "nobody");
}

static void test_refuses_bad_octets(void **state)
{
    (void)state;
    expect_refused("256.0.0.1", "'256.0.0.1': octet above 255");
    expect_refused("10.0.0.300/8", "'10.0.0.300/8': octet above 255");
    expect_refused("1.2.3.99999999999999999999", "'1.2.3.99999999999999999999': octet above 255");
    expect_refused("10.01.0.1", "'10.01.0.1': leading zero");
    expect_refused("00.0.0.0/0", "'00.0.0.0/0': leading zero");
    expect_refused("-1.0.0.0", "'-1.0.0.0': unexpected '-'");
    expect_refused("+1.0.0.0", "'+1.0.0.0': unexpected '+'");
    expect_refused("0x0a.0.0.1", "'0x0a.0.0.1': unexpected 'x'");
}

static void test_refuses_missing_parts(void **state)
{
    (void)state;
    expect_refused("10.0.2", "'10.0.2': address needs four octets");
    expect_refused("10.0.2/24", "'10.0.2/24': address needs four octets");
    expect_refused("10.0.2.", "'10.0.2.': address needs four octets");
    expect_refused("10..2.0", "'10..2.0': address needs four octets");
    expect_refused(".10.0.2.0", "'.10.0.2.0': address needs four octets");
    expect_refused("/24", "'/24': address needs four octets");
    expect_refused("10", "'10': address needs four octets");
    expect_refused("10.0.2.0/", "'10.0.2.0/': missing prefix");
}

static void test_refuses_bad_prefixes(void **state)
{
    (void)state;
    expect_refused("10.0.0.0/33", "'10.0.0.0/33': prefix above 32");
    expect_refused("10.0.0.0/100", "'10.0.0.0/100': prefix above 32");
    expect_refused("10.0.0.0/08", "'10.0.0.0/08': leading zero");
    expect_refused("10.0.0.0/-1", "'10.0.0.0/-1': unexpected '-'");
    expect_refused("10.0.0.0/24/8", "'10.0.0.0/24/8': unexpected '/'");
    expect_refused("10.0.0.0//24", "'10.0.0.0//24': unexpected '/'");
}

static void test_refuses_junk(void **state)
{
    (void)state;
    expect_refused("x10.0.0.1", "'x10.0.0.1': unexpected 'x'");
    expect_refused(" 10.0.0.1", "' 10.0.0.1': unexpected byte 0x20");
    expect_refused("10.0.0.1 ", "'10.0.0.1 ': unexpected byte 0x20");
    expect_refused("10.0.0.1/24 ", "'10.0.0.1/24 ': unexpected byte 0x20");
    expect_refused("10.0.0.1.5", "'10.0.0.1.5': unexpected '.'");
    expect_refused("10.0.0.1x", "'10.0.0.1x': unexpected 'x'");
    expect_refused("10.0.0.1/24x", "'10.0.0.1/24x': unexpected 'x'");
    expect_refused("10.0.0.1;rm", "'10.0.0.1;rm': unexpected ';'");
    expect_refused("10.0.\t.1", "'10.0.?.1': unexpected byte 0x09");
    expect_refused("localhost", "'localhost': unexpected 'l'");
    /* The bad entry is named even when others are good. */
    expect_refused("10.0.2.0/24,10.0.3.0/33,1.1.1.1", "'10.0.3.0/33': prefix above 32");
}

/* The quoted entry is shown printable, so the error stays one line whatever the option held. Found by
 * tests/fuzz/fuzz_allowlist.c: a 0xff byte, or a newline, went into the console line as it was. */
static void test_error_quotes_unprintable_bytes_as_question_marks(void **state)
{
    (void)state;
    expect_refused("010.0\3770.1/08", "'010.0?0.1/08': leading zero");
    expect_refused("10.0.0.1\n", "'10.0.0.1?': unexpected byte 0x0a");
    expect_refused("1.1.1.1,10.0.0.1\033[2J", "'10.0.0.1?[2J': unexpected byte 0x1b");
}

static void test_refuses_empty_entries(void **state)
{
    (void)state;
    expect_refused("", "empty list");
    expect_refused(",", "entry 1 is empty");
    expect_refused(",10.0.0.1", "entry 1 is empty");
    expect_refused("10.0.0.1,", "entry 2 is empty");
    expect_refused("10.0.0.1,,10.0.0.2", "entry 2 is empty");
}

static void test_refuses_a_ninth_entry(void **state)
{
    (void)state;
    expect_refused("1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7,8.8.8.8,9.9.9.9",
                   "'9.9.9.9': more than 8 entries");
}

static void test_error_quotes_long_entries_short(void **state)
{
    (void)state;
    char text[200];
    memset(text, '1', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    expect_refused(text, "'1111111111111111111111111111111111111111...': octet above 255");
}

static void test_local_subnet(void **state)
{
    (void)state;
    struct allowlist list;
    assert_true(allowlist_local_subnet(&list, IP(10, 0, 2, 15), 0xffffff00u));
    assert_int_equal(list.count, 1);
    assert_string_equal(formatted(&list), "10.0.2.0/24");
    EXPECT_VERDICTS(&list, { IP(10, 0, 2, 2), true }, { IP(10, 0, 3, 2), false });

    assert_true(allowlist_local_subnet(&list, IP(192, 168, 7, 130), 0xffffff80u));
    assert_string_equal(formatted(&list), "192.168.7.128/25");
    assert_true(allowlist_local_subnet(&list, IP(172, 16, 0, 1), 0xffffffffu));
    assert_string_equal(formatted(&list), "172.16.0.1/32");
    assert_true(allowlist_local_subnet(&list, IP(10, 1, 2, 3), 0x80000000u));
    assert_string_equal(formatted(&list), "0.0.0.0/1");
}

static void test_local_subnet_fails_closed(void **state)
{
    (void)state;
    struct allowlist list = parsed("10.0.0.0/8");
    /* No address yet, a /0 mask, holes in the mask: nobody. */
    assert_false(allowlist_local_subnet(&list, 0, 0xffffff00u));
    assert_int_equal(list.count, 0);
    assert_false(allowlist_permits(&list, IP(10, 0, 2, 2)));
    list = parsed("10.0.0.0/8");
    assert_false(allowlist_local_subnet(&list, IP(10, 0, 2, 15), 0));
    assert_int_equal(list.count, 0);
    assert_false(allowlist_local_subnet(&list, IP(10, 0, 2, 15), 0xff00ff00u));
    assert_int_equal(list.count, 0);
    assert_false(allowlist_local_subnet(&list, IP(10, 0, 2, 15), 0x00ffffffu));
    assert_false(allowlist_local_subnet(&list, IP(10, 0, 2, 15), 0xfffffffdu));
    assert_int_equal(list.count, 0);
}

/* ---- net_peer_permitted over fakes of what it reads -------------------------------------------------------- */

static const char *fake_allow_option;
static uint32_t fake_address, fake_netmask;
static char logged[256];

const char *cmdline_get(const char *key)
{
    return strcmp(key, "udpsh.allow") == 0 ? fake_allow_option : NULL;
}

uint32_t net_address(void) { return fake_address; }
uint32_t net_netmask(void) { return fake_netmask; }

void log_info(const char *fmt, ...)
{
    (void)fmt;
    fail_msg("net_peers_init logs only warnings");
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logged, sizeof logged, fmt, ap);
    va_end(ap);
}

/* One test, in this order: the state is the kernel's one allowlist, kept from the first net_peers_init on. */
static void test_every_service_asks_one_allowlist(void **state)
{
    (void)state;
    /* No udpsh.allow=: the local subnet, and nobody before there is an address. */
    net_peers_init();
    assert_string_equal(logged, "");
    assert_string_equal(net_peers_rule(), "local subnet");
    assert_false(net_peer_permitted(IP(10, 0, 2, 2)));
    fake_address = IP(10, 0, 2, 15);
    fake_netmask = 0xffffff00u;
    assert_true(net_peer_permitted(IP(10, 0, 2, 2)));
    assert_false(net_peer_permitted(IP(10, 0, 3, 2)));
    /* A udpsh.allow= that does not parse: one warning, the local subnet still. */
    fake_allow_option = "10.0.0.256/8";
    net_peers_init();
    assert_string_equal(logged, "udpsh: udpsh.allow: '10.0.0.256/8': octet above 255; allowing the local subnet");
    assert_string_equal(net_peers_rule(), "local subnet");
    assert_true(net_peer_permitted(IP(10, 0, 2, 2)));
    /* One that does: the option alone, whatever the address. */
    logged[0] = '\0';
    fake_allow_option = "192.168.1.0/24,10.0.3.7";
    net_peers_init();
    assert_string_equal(logged, "");
    assert_string_equal(net_peers_rule(), "udpsh.allow");
    assert_false(net_peer_permitted(IP(10, 0, 2, 2)));
    assert_true(net_peer_permitted(IP(10, 0, 3, 7)));
    assert_true(net_peer_permitted(IP(192, 168, 1, 200)));
    fake_address = 0;
    assert_true(net_peer_permitted(IP(192, 168, 1, 200)));
}

/* Addresses no sender holds are refused for every UDP service, by the default and by a list that names them. */
static void test_hostile_sources_are_never_permitted(void **state)
{
    (void)state;
    fake_address = IP(10, 0, 2, 15);
    fake_netmask = 0xffffff00u;
    static const uint32_t hostile[] = {
        IP(0, 0, 0, 0), IP(255, 255, 255, 255), IP(224, 0, 0, 1), IP(239, 255, 255, 250), IP(240, 0, 0, 1),
        IP(127, 0, 0, 1), IP(10, 0, 2, 15) /* ourselves */, IP(10, 0, 2, 255) /* the subnet's broadcast */,
    };
    static const char *const rules[] = { NULL, "0.0.0.0/0", "10.0.2.0/24,127.0.0.0/8,224.0.0.0/3,0.0.0.0/32" };
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        fake_allow_option = rules[r];
        net_peers_init();
        assert_string_equal(net_peers_rule(), rules[r] ? "udpsh.allow" : "local subnet");
        for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++)
            assert_false(net_peer_permitted(hostile[i]));
        assert_true(net_peer_permitted(IP(10, 0, 2, 2)));
        assert_true(net_peer_permitted(IP(10, 0, 2, 254)));
    }
    /* the subnet's broadcast follows the netmask */
    fake_netmask = 0xfffffe00u;
    assert_true(net_peer_permitted(IP(10, 0, 2, 255)));
    assert_false(net_peer_permitted(IP(10, 0, 3, 255)));
}

UNIT_MAIN(NULL, NULL,
          test_single_entries, test_host_bits_are_masked, test_eight_entries, test_permits_by_prefix,
          test_slash_zero_permits_everyone, test_slash_thirty_two_permits_one, test_empty_list_permits_nobody,
          test_refuses_bad_octets, test_refuses_missing_parts, test_refuses_bad_prefixes, test_refuses_junk,
          test_error_quotes_unprintable_bytes_as_question_marks, test_refuses_empty_entries, test_refuses_a_ninth_entry,
          test_error_quotes_long_entries_short, test_local_subnet, test_local_subnet_fails_closed,
          test_every_service_asks_one_allowlist, test_hostile_sources_are_never_permitted)
