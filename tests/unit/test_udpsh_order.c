/* tests/unit/test_udpsh_order.c: kernel/udpsh/auth.c's order (kernel/udpsh/auth.h) -- a flood of datagrams
 * without a good token, from rotating addresses and from the client's own address on other ports, spends only
 * the shared unvalidated bucket and leaves a validated client every answer; the length is refused before any
 * MAC; a bad udpsh.key= refuses every request a validated sender makes; the id= field and the keyed counter make
 * a resent request a repeat, answered from the remembered answer (or with one line when that was too long)
 * and never run twice, even once its token expired while it still ran; and the token's expiry handed to the
 * command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/hmac.h"
#include "kernel/udpsh/auth.h"
#include "kernel/udpsh/wire.h"
#include "udpsh_fixture.h"
#include "udpsh_requests.h"
#include "unit_main.h"

#define SEC 1000000000ll
#define MS 1000000ll
#define WINDOW UDPSH_TOKEN_WINDOW_NS
#define IP 0x0a000242u /* 10.0.2.66 */
#define PORT 40000

static void setup(bool keyed, uint32_t rate)
{
    udpsh_fixture_init(keyed);
    ratelimit_init(&auth.rate, rate, 0);
}

static void token_hex(uint32_t ip, uint16_t port, int64_t window, char hex[33])
{
    udpsh_token_hex(&auth, ip, port, window, hex);
}

/* "token=<ip:port's token now> " followed by rest. */
static void with_token(char *out, size_t cap, uint32_t ip, uint16_t port, int64_t now, const char *rest)
{
    char tok[33];
    token_hex(ip, port, now / WINDOW, tok);
    snprintf(out, cap, "token=%s %s", tok, rest);
}

/* The last datagram judge_tokened built (j.line points into it), to send again. */
static char tokened[256];

/* Judges rest from ip:port behind the token ip:port was given at made (what a client that has it sends). */
static void judge_tokened(uint32_t ip, uint16_t port, int64_t made, const char *rest, int64_t now)
{
    with_token(tokened, sizeof tokened, ip, port, made, rest);
    judge(ip, port, tokened, now);
}

static void test_a_forged_flood_spends_only_the_unvalidated_bucket(void **state)
{
    (void)state;
    setup(false, RATELIMIT_DEFAULT);
    /* a second of a thousand forged datagrams: half from rotating addresses, half from the client's own
     * address on other ports and on its own port with a made-up token; the client asks 40 times */
    unsigned client_ran = 0, forged_tokens = 0, forged_ran = 0;
    for (int64_t t = WINDOW; t < WINDOW + SEC; t += MS) {
        unsigned n = (unsigned)((t - WINDOW) / MS);
        if (n % 2)
            judge(0x0a000300u + n % 200, (uint16_t)(1024 + n), "help", t);
        else if (n % 4 == 0)
            judge(IP, (uint16_t)(PORT + 1 + n % 100), "help", t);
        else
            judge(IP, PORT, "token=00000000000000000000000000000000 help", t);
        forged_tokens += j.verdict == UDPSH_REPLY;
        forged_ran += j.verdict == UDPSH_RUN;
        if (n % 25 == 0) {
            judge_tokened(IP, PORT, t, "help", t);
            client_ran += j.verdict == UDPSH_RUN;
        }
    }
    assert_int_equal(client_ran, 40);
    assert_int_equal(forged_ran, 0);
    /* the forgers got the unvalidated burst and its refill, and the rest went unanswered, counted */
    assert_int_equal(forged_tokens, RATELIMIT_DEFAULT + 99);
    assert_int_equal(auth.counts.tokens_sent, forged_tokens);
    assert_int_equal(auth.counts.unvalidated_limited, 1000 - forged_tokens);
    assert_int_equal(auth.counts.validated_limited, 0);
}

static void test_a_validated_sender_is_held_to_its_own_rate(void **state)
{
    (void)state;
    setup(false, 5);
    unsigned ran = 0;
    for (int i = 0; i < 8; i++) {
        judge_tokened(IP, PORT, WINDOW, "ps", WINDOW);
        ran += j.verdict == UDPSH_RUN;
    }
    assert_int_equal(ran, 5);
    assert_int_equal(auth.counts.validated_limited, 3);
    /* its emptied bucket is its own: another port of its address still runs */
    judge_tokened(IP, PORT + 1, WINDOW, "ps", WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
}

static void test_length_is_refused_before_the_mac(void **state)
{
    (void)state;
    setup(true, 0);
    char line[400], datagram[700], tok[33];
    memset(line, 'a', 300);
    line[300] = 0;
    token_hex(IP, PORT, 3, tok);
    snprintf(datagram, sizeof datagram, "token=%s counter=1 mac=%064d %s", tok, 0, line);
    judge(IP, PORT, datagram, 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_string_equal(j.reply, UDPSH_REPLY_TOO_LONG);
    assert_int_equal(auth.counts.bad_mac, 0);
    assert_int_equal(auth.counts.too_long, 1);
    /* the longest line with the longest prefix is still checked */
    line[UDPSH_LINE_MAX] = 0;
    snprintf(datagram, sizeof datagram, "token=%s counter=18446744073709551615 mac=%064d %s\r\n", tok, 0, line);
    assert_true(strlen(datagram) <= UDPSH_REQUEST_MAX);
    judge(IP, PORT, datagram, 3 * WINDOW);
    assert_string_equal(j.reply, UDPSH_REPLY_BAD_MAC);
}

static void test_a_bad_key_refuses_every_request(void **state)
{
    (void)state;
    setup(false, 0);
    auth.key_refused = true;
    /* a sender without a token gets the token answer and nothing else */
    judge(IP, PORT, "help", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_true(strncmp(j.reply, "# udpsh token=", 14) == 0);
    static const char *const lines[] = { "help", "", "ps", "poweroff", "id=4 net" };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        judge_tokened(IP, PORT, 3 * WINDOW, lines[i], 3 * WINDOW);
        assert_int_equal(j.verdict, UDPSH_REPLY);
        assert_string_equal(j.reply, UDPSH_REPLY_KEY_REFUSED);
    }
    assert_int_equal(auth.counts.key_refused, 5);
}

static void test_id_grammar(void **state)
{
    (void)state;
    setup(false, 0);
    judge_tokened(IP, PORT, 3 * WINDOW, "id=17 help", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_true(j.has_id);
    assert_int_equal(j.id, 17);
    assert_int_equal(j.line_len, 4);
    assert_memory_equal(j.line, "help", 4);
    /* the old grammar stays: no id, nothing to remember */
    judge_tokened(IP, PORT, 3 * WINDOW, "help", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_false(j.has_id);
    assert_null(udpsh_remember_start(&auth, IP, PORT, &j, 3 * WINDOW));
    /* a malformed id earns a token, not a run */
    static const char *const bad[] = { "id= help", "id=x help", "id=5x help", "id=99999999999999999999 help" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        judge_tokened(IP, PORT, 3 * WINDOW, bad[i], 3 * WINDOW);
        assert_int_equal(j.verdict, UDPSH_REPLY);
        assert_true(strncmp(j.reply, "# udpsh token=", 14) == 0);
    }
}

static char sent[4096];
static size_t sent_len;
static unsigned sent_datagrams;

static void capture(void *arg, const char *data, size_t len)
{
    (void)arg;
    memcpy(sent + sent_len, data, len);
    sent_len += len;
    sent_datagrams++;
}

static void test_a_repeat_is_answered_from_memory_not_run(void **state)
{
    (void)state;
    setup(false, 0);
    judge_tokened(IP, PORT, 3 * WINDOW, "id=5 uptime", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
    struct udpsh_remembered *r = udpsh_remember_start(&auth, IP, PORT, &j, 3 * WINDOW);
    assert_non_null(r);
    /* while it runs, a repeat names the same slot (the caller then sends nothing) */
    judge(IP, PORT, tokened, 3 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
    assert_ptr_equal(j.remembered, r);
    udpsh_remember_datagram(r, "up 5 s\n", 7);
    udpsh_remember_datagram(r, "# udpsh end seq=1 datagrams=1 bytes=7 crc32=00000000 status=0\n", 62);
    /* after: the same two datagrams again, in order */
    judge(IP, PORT, tokened, 3 * WINDOW + 2);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
    sent_len = sent_datagrams = 0;
    udpsh_remembered_replay(j.remembered, capture, 0);
    assert_int_equal(sent_datagrams, 2);
    assert_int_equal(sent_len, 69);
    assert_memory_equal(sent, "up 5 s\n# udpsh end seq=1", 24);
    /* another id is a new request; so is the same id from another port (its own token) */
    judge_tokened(IP, PORT, 3 * WINDOW, "id=6 uptime", 3 * WINDOW + 3);
    assert_int_equal(j.verdict, UDPSH_RUN);
    judge_tokened(IP, PORT + 1, 3 * WINDOW, "id=5 uptime", 3 * WINDOW + 3);
    assert_int_equal(j.verdict, UDPSH_RUN);
}

static void test_a_keyed_repeat_is_the_same_counter(void **state)
{
    (void)state;
    setup(true, 0);
    keyed(IP, PORT, 100, "ps", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_true(j.keyed && j.has_id && j.id == 100);
    struct udpsh_remembered *r = udpsh_remember_start(&auth, IP, PORT, &j, 3 * WINDOW);
    udpsh_remember_datagram(r, "ps\n", 3);
    keyed(IP, PORT, 100, "ps", 3 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
    assert_int_equal(auth.counts.replayed, 0);
    /* an older counter is still a replay, refused */
    keyed(IP, PORT, 99, "ps", 3 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_string_equal(j.reply, UDPSH_REPLY_REPLAYED);
    /* a repeat whose MAC is wrong is no repeat: the MAC comes first */
    char tok[33], datagram[300];
    token_hex(IP, PORT, 3, tok);
    snprintf(datagram, sizeof datagram, "token=%s counter=100 mac=%064d ps", tok, 0);
    judge(IP, PORT, datagram, 3 * WINDOW + 1);
    assert_string_equal(j.reply, UDPSH_REPLY_BAD_MAC);
}

static void test_an_answer_too_long_to_keep_gets_one_line_on_repeat(void **state)
{
    (void)state;
    setup(false, 0);
    char chunk[UDPSH_DATAGRAM_MAX];
    memset(chunk, 'x', sizeof chunk);
    judge_tokened(IP, PORT, 3 * WINDOW, "id=9 profile 800 all raw", 3 * WINDOW);
    struct udpsh_remembered *r = udpsh_remember_start(&auth, IP, PORT, &j, 3 * WINDOW);
    for (int i = 0; i < 3; i++)
        udpsh_remember_datagram(r, chunk, sizeof chunk);
    assert_true(r->too_long);
    judge(IP, PORT, tokened, 3 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
    sent_len = sent_datagrams = 0;
    udpsh_remembered_replay(j.remembered, capture, 0);
    assert_int_equal(sent_datagrams, 1);
    assert_int_equal(sent_len, strlen(UDPSH_REPLY_NOT_REMEMBERED));
    assert_memory_equal(sent, UDPSH_REPLY_NOT_REMEMBERED, sent_len);
}

static void test_the_least_recent_answer_is_forgotten_first(void **state)
{
    (void)state;
    setup(false, 0);
    for (unsigned i = 0; i <= UDPSH_REMEMBERED; i++) {
        judge_tokened(IP + i, PORT, 3 * WINDOW, "id=1 ps", 3 * WINDOW + i);
        assert_int_equal(j.verdict, UDPSH_RUN);
        udpsh_remember_datagram(udpsh_remember_start(&auth, IP + i, PORT, &j, 3 * WINDOW + i), "a\n", 2);
    }
    /* the first sender's answer went to make room; the others' are kept */
    judge_tokened(IP, PORT, 3 * WINDOW, "id=1 ps", 3 * WINDOW + 10);
    assert_int_equal(j.verdict, UDPSH_RUN);
    judge_tokened(IP + 1, PORT, 3 * WINDOW, "id=1 ps", 3 * WINDOW + 10);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
}

static void test_the_token_expiry_goes_with_the_run(void **state)
{
    (void)state;
    setup(false, 0);
    char datagram[128], tok[33];
    /* a token made in window 3 is good through window 4 */
    token_hex(IP, PORT, 3, tok);
    snprintf(datagram, sizeof datagram, "token=%s netload send 10.0.2.66 9 60", tok);
    judge(IP, PORT, datagram, 3 * WINDOW + 7 * SEC);
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_int_equal(j.token_expires_ns, 5 * WINDOW);
    judge(IP, PORT, datagram, 4 * WINDOW + 7 * SEC);
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_int_equal(j.token_expires_ns, 5 * WINDOW);
}

static void test_a_repeat_of_the_running_request_whose_token_expired_is_still_a_repeat(void **state)
{
    (void)state;
    setup(false, 0);
    judge_tokened(IP, PORT, 3 * WINDOW, "id=5 netload send 10.0.2.2 9 600", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
    assert_int_equal(j.token_expires_ns, 5 * WINDOW);
    running_request = udpsh_remember_start(&auth, IP, PORT, &j, 3 * WINDOW);
    /* the client resends while the run (stopped by that expiry) has not answered yet: a repeat, no fresh token
     * (which the client would take to mean "start afresh") */
    uint64_t tokens = auth.counts.tokens_sent;
    judge(IP, PORT, tokened, 5 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
    assert_ptr_equal(j.remembered, running_request);
    assert_int_equal(auth.counts.tokens_sent, tokens);
    /* another id, or the same id from another port, is no repeat of it: a token */
    judge_tokened(IP, PORT, 3 * WINDOW, "id=6 netload send 10.0.2.2 9 600", 5 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_ptr_equal(j.reply, j.token_reply);
    judge_tokened(IP, PORT + 1, 3 * WINDOW, "id=5 netload send 10.0.2.2 9 600", 5 * WINDOW + 1);
    assert_ptr_equal(j.reply, j.token_reply);
    /* once it has ended, the expired token earns a token, never the remembered answer */
    udpsh_remember_datagram(running_request, "netload: stopped\n", 17);
    running_request = NULL;
    judge(IP, PORT, tokened, 5 * WINDOW + 2);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_ptr_equal(j.reply, j.token_reply);
    assert_int_equal(auth.counts.tokens_sent, tokens + 3);
}

static void test_a_keyed_repeat_of_the_running_request_is_its_counter_only(void **state)
{
    (void)state;
    setup(true, 0);
    keyed(IP, PORT, 100, "netload send 10.0.2.2 9 600", 3 * WINDOW);
    assert_int_equal(j.verdict, UDPSH_RUN);
    running_request = udpsh_remember_start(&auth, IP, PORT, &j, 3 * WINDOW);
    char again[700];
    udpsh_keyed_datagram(&auth, key, sizeof key, IP, PORT, 3, 100, "netload send 10.0.2.2 9 600", again,
                         sizeof again);
    judge(IP, PORT, again, 5 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPEAT);
    assert_ptr_equal(j.remembered, running_request);
    udpsh_keyed_datagram(&auth, key, sizeof key, IP, PORT, 3, 101, "netload send 10.0.2.2 9 600", again,
                         sizeof again);
    judge(IP, PORT, again, 5 * WINDOW + 1);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_ptr_equal(j.reply, j.token_reply);
}

UNIT_MAIN(NULL, NULL,
          test_a_forged_flood_spends_only_the_unvalidated_bucket, test_a_validated_sender_is_held_to_its_own_rate,
          test_length_is_refused_before_the_mac, test_a_bad_key_refuses_every_request, test_id_grammar,
          test_a_repeat_is_answered_from_memory_not_run, test_a_keyed_repeat_is_the_same_counter,
          test_an_answer_too_long_to_keep_gets_one_line_on_repeat, test_the_least_recent_answer_is_forgotten_first,
          test_the_token_expiry_goes_with_the_run,
          test_a_repeat_of_the_running_request_whose_token_expired_is_still_a_repeat,
          test_a_keyed_repeat_of_the_running_request_is_its_counter_only)
