/* tests/unit/test_udpsh_auth.c: kernel/udpsh/auth.c and the key it holds (kernel/net/keyed_service.c) -- the
 * token (pinned to bytes computed independently in Python, as scripts/kprof_wire.py computes them), valid in
 * its window and the next only and only for its address and port, over a window shortened by
 * udpsh.token_window_ms= too; the request grammar; keyed requests (the MAC
 * pinned the same way, a bad MAC, a missing one, counters that do not rise, the sender table full and freed two
 * windows later); the 3x budget; replies recognised; udpsh.key= parsing (keyed_key_parse, the debugger's too);
 * and what an unkeyed request may run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/hmac.h"
#include "kernel/net/keyed_service.h"
#include "kernel/udpsh/auth.h"
#include "udpsh_fixture.h"
#include "udpsh_requests.h"
#include "unit_main.h"

#define SEC 1000000000ll
#define WINDOW UDPSH_TOKEN_WINDOW_NS
#define IP 0x0a000242u /* 10.0.2.66 */
#define PORT 40000

/* From Python: hmac.new(bytes(range(32)), struct.pack(">IHQ", 0x0a000242, 40000, 3), sha256).digest()[:16] */
#define TOKEN_W3 "39ddab35fe4883596821754fab590f28"
/* hmac.new(bytes(range(16, 32)), b"<TOKEN_W3> 7 help", sha256) */
#define MAC_7_HELP "58bf27420e941101161ad7a0b3c8fd3ee8c25507a44ec75ab7a6bb335a305fdb"

static void setup_unkeyed(void)
{
    udpsh_fixture_init(false);
}

static void setup_keyed(void)
{
    udpsh_fixture_init(true);
}

static void assert_runs(const char *line)
{
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_int_equal(j.line_len, strlen(line));
    assert_memory_equal(j.line, line, j.line_len);
}

static void assert_reply(const char *reply)
{
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_int_equal(j.reply_len, strlen(reply));
    assert_memory_equal(j.reply, reply, j.reply_len);
}

static void test_token_pinned_and_given_to_a_request_without_one(void **state)
{
    (void)state;
    setup_unkeyed();
    uint8_t token[16];
    udpsh_token(&auth, IP, PORT, 3, token);
    char hex[33];
    for (int i = 0; i < 16; i++)
        sprintf(hex + 2 * i, "%02x", token[i]);
    assert_string_equal(hex, TOKEN_W3);
    judge(IP, PORT, "help\n", 3 * WINDOW + 5 * SEC);
    assert_reply("# udpsh token=" TOKEN_W3 "\n");
    assert_int_equal(j.reply_len, UDPSH_TOKEN_REPLY_LEN);
    assert_int_equal(auth.counts.tokens_sent, 1);
}

static void test_token_runs_in_its_window_and_the_next_only(void **state)
{
    (void)state;
    setup_unkeyed();
    judge(IP, PORT, "token=" TOKEN_W3 " help\n", 3 * WINDOW);
    assert_runs("help\n");
    judge(IP, PORT, "token=" TOKEN_W3 " help", 5 * WINDOW - 1);
    assert_runs("help");
    /* two windows on it has expired: a fresh token instead */
    judge(IP, PORT, "token=" TOKEN_W3 " help", 5 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_true(strncmp(j.reply, "# udpsh token=", 14) == 0);
    assert_false(strncmp(j.reply + 14, TOKEN_W3, 32) == 0);
    /* and the window before it was made does not take it either */
    judge(IP, PORT, "token=" TOKEN_W3 " help", 3 * WINDOW - 1);
    assert_int_equal(j.verdict, UDPSH_REPLY);
}

/* udpsh.token_window_ms=: the same rule over a shorter window (the integration test of a token's stop uses 2 s);
 * a value outside 1..30 s is refused and changes nothing. */
static void test_a_shortened_window_is_the_same_rule_in_seconds(void **state)
{
    (void)state;
    setup_unkeyed();
    assert_int_equal(auth.token_window_ns, WINDOW);
    assert_false(udpsh_auth_set_token_window_ms(&auth, 999));
    assert_false(udpsh_auth_set_token_window_ms(&auth, 30001));
    assert_int_equal(auth.token_window_ns, WINDOW);
    assert_true(udpsh_auth_set_token_window_ms(&auth, 2000));
    const int64_t w = 2 * SEC;
    judge(IP, PORT, "token=" TOKEN_W3 " help", 3 * w); /* the token of window 3, whatever its length */
    assert_runs("help");
    assert_int_equal(j.token_expires_ns, 5 * w);
    judge(IP, PORT, "token=" TOKEN_W3 " help", 5 * w - 1);
    assert_runs("help");
    judge(IP, PORT, "token=" TOKEN_W3 " help", 5 * w);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_true(strncmp(j.reply, "# udpsh token=", 14) == 0);
    judge(IP, PORT, "token=" TOKEN_W3 " help", 3 * w - 1);
    assert_int_equal(j.verdict, UDPSH_REPLY);
}

static void test_token_is_for_one_address_and_port(void **state)
{
    (void)state;
    setup_unkeyed();
    int64_t now = 3 * WINDOW;
    judge(IP + 1, PORT, "token=" TOKEN_W3 " help", now);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    judge(IP, PORT + 1, "token=" TOKEN_W3 " help", now);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    /* another secret (another boot) makes other tokens */
    secret[0] ^= 1;
    udpsh_auth_init(&auth, secret, NULL, 0);
    judge(IP, PORT, "token=" TOKEN_W3 " help", now);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_int_equal(auth.counts.tokens_sent, 1);
}

static void test_request_grammar(void **state)
{
    (void)state;
    setup_unkeyed();
    int64_t now = 3 * WINDOW;
    /* the token alone is an empty command; its line ending stays with the line */
    judge(IP, PORT, "token=" TOKEN_W3, now);
    assert_runs("");
    judge(IP, PORT, "token=" TOKEN_W3 "\r\n", now);
    assert_runs("\r\n");
    /* one space only is the separator; a second belongs to the line */
    judge(IP, PORT, "token=" TOKEN_W3 "  ps", now);
    assert_runs(" ps");
    /* malformed prefixes earn a token, not a run */
    static const char *const bad[] = {
        "token=" TOKEN_W3 "x help",              /* no separator */
        "token=39DDAB35FE4883596821754FAB590F28 help", /* uppercase */
        "token=39ddab35fe4883596821754fab590f2 help",  /* short */
        "token=",
        "token=" TOKEN_W3 " counter=7 help",       /* a counter without its mac */
        "token=" TOKEN_W3 " counter= mac=" MAC_7_HELP " help",
        "token=" TOKEN_W3 " counter=99999999999999999999 mac=" MAC_7_HELP " help", /* above 2^64-1 */
        "token=" TOKEN_W3 " counter=7 mac=" "58bf27420e941101" " help",
        "tokens=" TOKEN_W3 " help",
        " token=" TOKEN_W3 " help",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        judge(IP, PORT, bad[i], now);
        assert_int_equal(j.verdict, UDPSH_REPLY);
        assert_true(strncmp(j.reply, "# udpsh token=", 14) == 0);
    }
    struct udpsh_request_prefix p;
    const char *max = "token=" TOKEN_W3 " counter=18446744073709551615 mac=" MAC_7_HELP " x";
    assert_true(udpsh_prefix_parse((const uint8_t *)max, strlen(max), &p));
    assert_true(p.has_mac && p.counter == UINT64_MAX && p.counter_len == 20);
    assert_string_equal(max + p.line_at, "x");
    /* unkeyed: a MAC proves nothing, the line runs as unkeyed */
    judge(IP, PORT, "token=" TOKEN_W3 " counter=7 mac=" MAC_7_HELP " help", now);
    assert_runs("help");
    assert_false(j.keyed);
}

static void test_keyed_request_pinned(void **state)
{
    (void)state;
    setup_keyed();
    int64_t now = 3 * WINDOW + SEC;
    judge(IP, PORT, "token=" TOKEN_W3 " counter=7 mac=" MAC_7_HELP " help", now);
    assert_runs("help");
    assert_true(j.keyed);
    /* the same again is a replay */
    judge(IP, PORT, "token=" TOKEN_W3 " counter=7 mac=" MAC_7_HELP " help", now);
    assert_reply(UDPSH_REPLY_REPLAYED);
    assert_int_equal(auth.counts.replayed, 1);
}

static void test_keyed_refusals(void **state)
{
    (void)state;
    setup_keyed();
    int64_t now = 3 * WINDOW + SEC;
    judge(IP, PORT, "token=" TOKEN_W3 " help", now);
    assert_reply(UDPSH_REPLY_NEEDS_MAC);
    /* one bit off in the MAC, or the line changed under it, or the counter */
    judge(IP, PORT, "token=" TOKEN_W3 " counter=7 mac=" "48bf27420e941101161ad7a0b3c8fd3ee8c25507a44ec75ab7a6bb335a305fdb"
          " help", now);
    assert_reply(UDPSH_REPLY_BAD_MAC);
    judge(IP, PORT, "token=" TOKEN_W3 " counter=7 mac=" MAC_7_HELP " poweroff", now);
    assert_reply(UDPSH_REPLY_BAD_MAC);
    judge(IP, PORT, "token=" TOKEN_W3 " counter=8 mac=" MAC_7_HELP " help", now);
    assert_reply(UDPSH_REPLY_BAD_MAC);
    judge(IP, PORT, "token=" TOKEN_W3 " counter=07 mac=" MAC_7_HELP " help", now);
    assert_reply(UDPSH_REPLY_BAD_MAC);
    assert_int_equal(auth.counts.no_mac, 1);
    assert_int_equal(auth.counts.bad_mac, 4);
    /* no token at all: still just a token, whatever the MAC */
    judge(IP, PORT, "counter=7 mac=" MAC_7_HELP " help", now);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_true(strncmp(j.reply, "# udpsh token=", 14) == 0);
}

static void test_counters_rise_per_address(void **state)
{
    (void)state;
    setup_keyed();
    int64_t now = 10 * WINDOW;
    keyed(IP, PORT, 100, "ps", now);
    assert_runs("ps");
    /* another port of the same address shares its counter; a lower one is refused */
    keyed(IP, PORT + 1, 99, "ps", now);
    assert_reply(UDPSH_REPLY_REPLAYED);
    keyed(IP, PORT + 1, 101, "ps", now);
    assert_runs("ps");
    /* another address has its own */
    keyed(IP + 1, PORT, 1, "ps", now);
    assert_runs("ps");
    keyed(IP + 1, PORT, 2, "ps", now + 1);
    assert_runs("ps");
}

static void test_sender_table_full_then_freed_after_two_windows(void **state)
{
    (void)state;
    setup_keyed();
    int64_t now = 10 * WINDOW;
    for (uint32_t i = 0; i < UDPSH_KEYED_SENDERS; i++) {
        keyed(IP + i, PORT, 5, "ps", now);
        assert_runs("ps");
    }
    keyed(IP + 100, PORT, 5, "ps", now);
    assert_reply(UDPSH_REPLY_SENDERS_FULL);
    assert_int_equal(auth.counts.senders_full, 1);
    /* two windows later, no request of theirs can be replayed: their slots may go */
    keyed(IP + 100, PORT, 5, "ps", now + 2 * WINDOW);
    assert_reply(UDPSH_REPLY_SENDERS_FULL);
    keyed(IP + 100, PORT, 5, "ps", now + 2 * WINDOW + 1);
    assert_runs("ps");
    /* the one still remembered keeps its counter */
    keyed(IP + 1, PORT, 5, "ps", now + 2 * WINDOW + 1);
    assert_reply(UDPSH_REPLY_REPLAYED);
}

static void test_budget(void **state)
{
    (void)state;
    /* headers count both ways: 28 + reply <= 3 * (28 + request) */
    assert_true(net_reply_within_budget(0, 56));
    assert_false(net_reply_within_budget(0, 57));
    assert_true(net_reply_within_budget(5, 71));
    assert_false(net_reply_within_budget(5, 72));
    assert_true(net_reply_within_budget(1472, 3 * 1500 - 28));
    assert_false(net_reply_within_budget(1472, 3 * 1500 - 27));
    /* the token reply fits the emptiest datagram */
    assert_true(net_reply_within_budget(0, UDPSH_TOKEN_REPLY_LEN));
    setup_unkeyed();
    judge(IP, PORT, "", 0);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_int_equal(auth.counts.over_budget, 0);
}

static void test_replies_are_recognised_and_dropped(void **state)
{
    (void)state;
    setup_unkeyed();
    static const char *const replies[] = {
        "# udpsh token=" TOKEN_W3 "\n",
        "# udpsh end seq=1 datagrams=0 bytes=0 crc32=00000000 status=0\n",
        "\n# udpsh end seq=1 datagrams=1 bytes=5 crc32=3610a686 status=0\n",
        "# udpsh busy: another command is running\n",
        "# udpsh ",
    };
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        assert_true(udpsh_looks_like_reply((const uint8_t *)replies[i], strlen(replies[i])));
        judge(IP, PORT, replies[i], 0);
        assert_int_equal(j.verdict, UDPSH_DROP);
    }
    assert_int_equal(auth.counts.replies_ignored, 5);
    assert_int_equal(auth.counts.tokens_sent, 0);
    static const char *const not_replies[] = { "# udpsh", "#udpsh end", "\n\n# udpsh end", " # udpsh end", "help" };
    for (size_t i = 0; i < sizeof not_replies / sizeof not_replies[0]; i++)
        assert_false(udpsh_looks_like_reply((const uint8_t *)not_replies[i], strlen(not_replies[i])));
}

static void test_key_option(void **state)
{
    (void)state;
    uint8_t k[KEYED_KEY_MAX_BYTES];
    size_t len = 0;
    char error[KEYED_KEY_ERROR_MAX];
    assert_true(keyed_key_parse("000102030405060708090a0b0c0d0E0F", k, &len, error, sizeof error));
    assert_int_equal(len, 16);
    assert_int_equal(k[14], 0x0e);
    assert_int_equal(k[15], 0x0f);
    char longest[129];
    memset(longest, 'a', 128);
    longest[128] = 0;
    assert_true(keyed_key_parse(longest, k, &len, error, sizeof error));
    assert_int_equal(len, 64);
    longest[127] = 0;
    assert_false(keyed_key_parse(longest, k, &len, error, sizeof error));
    assert_string_equal(error, "an odd number of hex digits (127)");
    memset(longest, 'a', 128);
    longest[128] = 0;
    char too_long[131];
    snprintf(too_long, sizeof too_long, "%saa", longest);
    assert_false(keyed_key_parse(too_long, k, &len, error, sizeof error));
    assert_string_equal(error, "520 bits; want 128 to 512 (32 to 128 hex digits)");
    assert_false(keyed_key_parse("00010203040506070809", k, &len, error, sizeof error));
    assert_string_equal(error, "80 bits; want 128 to 512 (32 to 128 hex digits)");
    assert_false(keyed_key_parse("000102030405060708090a0b0c0d0e0g", k, &len, error, sizeof error));
    assert_string_equal(error, "character 32 is not a hex digit");
    assert_false(keyed_key_parse("", k, &len, error, sizeof error));
    assert_int_equal(len, 64); /* untouched by a failure */
    /* a key of the wrong length given to init leaves the shell unkeyed */
    udpsh_auth_init(&auth, secret, k, 15);
    assert_false(auth.service.keyed);
}

static bool is_command(const char *name)
{
    static const char *const names[] = { "help", "profile", "lscpu", "ps", "label", "stacks", "tasks", "cpus",
                                         "net", "netload", "mem", "uptime", "burn", "work", "panic", "poweroff" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

static void test_what_unkeyed_may_run(void **state)
{
    (void)state;
    static const char *const yes[] = { "", "  ", "help", "profile 300 all raw", "lscpu", "ps", "stacks", "tasks",
                                       "cpus", "net", "mem", "uptime", "bogus", "netload sink 6000 3",
                                       "netload send 10.0.2.66 9 1", "netload send 10.0.2.066 9 1", "\tps",
                                       "profile stream", "profile stream 9000", "profile stream 9000 30 all",
                                       "profile stream 10.0.2.66:9000 30", "profile stream stop" };
    static const char *const no[] = { "poweroff", "panic", "label 3 a=b", "burn 100", "work 100 1", "work",
                                      "work spans", "netload echo 6000 3",
                                      "netload send 10.0.2.77 9999 3 1024 5000", "netload send 10.0.2.67 9 1",
                                      "netload", "netload bogus", "netload send", "net wedge 100",
                                      "poweroff 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
                                      "profile stream 10.0.2.67:9000", "profile stream 10.0.2.77:9000 5 all",
                                      "profile stream 1.2.3.4.5:9", "profile stream 10.0.2.66.1:9000",
                                      "profile stream :9000" };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(udpsh_unkeyed_allows(yes[i], IP, is_command));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(udpsh_unkeyed_allows(no[i], IP, is_command));
}

UNIT_MAIN(NULL, NULL,
          test_token_pinned_and_given_to_a_request_without_one, test_token_runs_in_its_window_and_the_next_only,
          test_a_shortened_window_is_the_same_rule_in_seconds, test_token_is_for_one_address_and_port,
          test_request_grammar, test_keyed_request_pinned, test_keyed_refusals, test_counters_rise_per_address,
          test_sender_table_full_then_freed_after_two_windows, test_budget, test_replies_are_recognised_and_dropped,
          test_key_option, test_what_unkeyed_may_run)
