/* tests/unit/test_gdb_udp_keyed.c: the gdb UDP transport (gdbstub/udp.c) speaking KPG1 (gdbstub/udp_auth.c
 * through tests/unit/gdb_udp_seam.c), keyed and plain (no key: the empty key), on a fake card: raw, forged
 * and replayed datagrams neither stop a running machine nor claim the peer nor get an answer; a hello gets
 * its nonce answer to the sender and nothing else, within a shared budget that the proven peer does not
 * share; a sealed packet attaches, the stub's answer goes out sealed under the peer's nonce; a relay's
 * retransmission (same packet, fresh counter) is answered again once, not run again; a 2^64-1 counter locks
 * out no one but its own session; no fragment is reassembled, not even the peer's address's, and a packet cut
 * into pieces (as the relay sends it) arrives whole, sent again too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gdbstub/udp.h"
#include "kernel/lib/hmac.h"
#include "kernel/net/netpoll.h"
#include "tests/unit/gdb_udp_fake_card.h"
#include "tests/unit/gdb_udp_seam.h"

#define RELAY_PORT 40000 /* the fake card's gdb side: the relay */
static uint8_t secret[32], key[16];
static size_t key_len; /* 16 keyed, 0 plain */
static uint64_t relay_counter = 100;

static void relay_sends_raw(const uint8_t *bytes, size_t len)
{
    gdb_sends_from(GDB_IP, RELAY_PORT, (const char *)bytes, len);
}

/* The datagram the relay makes from port `from` for len gdb bytes under counter, into d (room for len +
 * GDB_UDP_KEYED_OVERHEAD): its length. */
static size_t seal_into(uint8_t *d, uint16_t from, const char *gdb, size_t len, uint64_t counter,
                        const uint8_t *with_key)
{
    size_t n = 0;
    memcpy(d, "KPG1d", 5);
    n = 5;
    gdb_udp_session_nonce(gdb_udp_seam_auth(), GDB_IP, from, d + n);
    n += 16;
    for (int i = 0; i < 8; i++)
        d[n++] = (uint8_t)(counter >> (56 - 8 * i));
    memcpy(d + n, gdb, len);
    n += len;
    hmac_sha256(with_key, with_key == key ? key_len : sizeof key, d, n, d + n);
    return n + 32;
}

/* The datagram the relay makes for gdb's bytes (counter given, or the next); kept for a replay. */
static uint8_t last_sent[256];
static size_t last_sent_len;
static void seals_from(uint16_t from, const char *gdb, uint64_t counter, const uint8_t *with_key)
{
    assert_true(strlen(gdb) + GDB_UDP_KEYED_OVERHEAD <= sizeof last_sent);
    last_sent_len = seal_into(last_sent, from, gdb, strlen(gdb), counter, with_key);
    gdb_sends_from(GDB_IP, from, (const char *)last_sent, last_sent_len);
}

static void relay_seals(const char *gdb, uint64_t counter, const uint8_t *with_key)
{
    seals_from(RELAY_PORT, gdb, counter, with_key);
}

static void relay_sends(const char *gdb)
{
    relay_seals(gdb, ++relay_counter, key);
}

/* The gdb bytes of the next sealed reply, checked as the relay checks them. */
static const char *next_sealed(void)
{
    static char inner[GDB_UDP_INNER_MAX + 1];
    assert_true(next_reply());
    assert_true(got_len >= GDB_UDP_KEYED_OVERHEAD);
    assert_memory_equal(got, "KPG1r", 5);
    uint8_t nonce[16], mac[32];
    gdb_udp_session_nonce(gdb_udp_seam_auth(), GDB_IP, RELAY_PORT, nonce);
    assert_memory_equal(got + 5, nonce, 16);
    hmac_sha256(key, key_len, got, got_len - 32, mac);
    assert_memory_equal(got + got_len - 32, mac, 32);
    size_t n = got_len - GDB_UDP_KEYED_OVERHEAD;
    memcpy(inner, got + GDB_UDP_HEAD_LEN, n);
    inner[n] = 0;
    return inner;
}

static int setup_with(size_t with_key_len)
{
    key_len = with_key_len;
    for (int i = 0; i < 32; i++)
        secret[i] = (uint8_t)(7 * i);
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(0x40 + i);
    fake_card_start(secret, key_len ? key : NULL, key_len, false);
    return 0;
}

static int setup_keyed(void **state)
{
    (void)state;
    return setup_with(sizeof key);
}

static int setup_plain(void **state)
{
    (void)state;
    return setup_with(0);
}

static void assert_nobody_attached(void)
{
    assert_int_equal(peer_ip(NULL), 0);
}

static void test_plain_and_forged_stop_nothing_and_get_nothing(void **state)
{
    (void)state;
    const char *plain = "$qSupported:multiprocess+#c6";
    relay_sends_raw((const uint8_t *)plain, strlen(plain));
    relay_sends_raw((const uint8_t *)"\x03", 1);
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    uint8_t wrong[16];
    memset(wrong, 0x33, sizeof wrong);
    relay_seals("$qSupported:multiprocess+#c6", 5, wrong);
    relay_seals("\x03", 6, wrong);
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    assert_nobody_attached();
    assert_false(next_reply()); /* not one datagram back */
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "");
}

static void test_hello_gets_its_answer_and_claims_nothing(void **state)
{
    (void)state;
    uint8_t hello[GDB_UDP_HELLO_LEN] = { 'K', 'P', 'G', '1', 'h', 9, 9, 9 };
    relay_sends_raw(hello, sizeof hello);
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    assert_nobody_attached();
    assert_true(next_reply());
    assert_int_equal(got_len, GDB_UDP_NONCE_LEN);
    assert_memory_equal(got, "KPG1n", 5);
    assert_memory_equal(got + 5, hello + 5, 16);
    uint8_t nonce[16];
    gdb_udp_session_nonce(gdb_udp_seam_auth(), GDB_IP, RELAY_PORT, nonce);
    assert_memory_equal(got + 21, nonce, 16);
    assert_false(next_reply());
}

static void test_sealed_packet_attaches_answer_sealed_replay_dropped_resend_answered(void **state)
{
    (void)state;
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    uint16_t port;
    assert_int_not_equal(peer_ip(&port), 0);
    assert_int_equal(port, RELAY_PORT);
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    stub_writes("+");
    stub_writes("$PacketSize=4000#00");
    assert_string_equal(next_sealed(), "+");
    assert_string_equal(next_sealed(), "$PacketSize=4000#00");

    relay_sends("+");
    relay_sends("$g#67");
    assert_string_equal(read_all(), "+$g#67");
    stub_writes("+");
    stub_writes("$0011#62");
    assert_string_equal(next_sealed(), "+");
    assert_string_equal(next_sealed(), "$0011#62");
    /* the same datagram again (a replay, or the network's duplicate): dropped before the transport sees it */
    uint64_t dropped = gdb_udp_seam_auth()->counts.replayed;
    relay_sends_raw(last_sent, last_sent_len);
    assert_string_equal(read_all(), "");
    assert_int_equal(gdb_udp_seam_auth()->counts.replayed, dropped + 1);
    assert_false(next_reply());
    /* the relay's retransmission: the same packet under a fresh counter -- answered again, not run again */
    relay_sends("$g#67");
    assert_string_equal(read_all(), "");
    assert_string_equal(next_sealed(), "+$0011#62"); /* the ack and the reply it remembered, in one */
    assert_false(next_reply());
    /* and once only */
    relay_sends("$g#67");
    assert_string_equal(read_all(), "");
    assert_false(next_reply());
}

static void send_hello_from(uint16_t port, uint8_t tag)
{
    uint8_t hello[GDB_UDP_HELLO_LEN] = { 'K', 'P', 'G', '1', 'h', tag };
    gdb_sends_from(GDB_IP, port, (const char *)hello, sizeof hello);
    running_delivers();
}

/* Frames the stub sent since last asked, to anyone; then forgotten, so a flood's answers never fill the fake
 * card's queue. */
static int count_replies(void)
{
    int n = (int)(from_card.count - from_card.next);
    from_card.count = from_card.next = 0;
    return n;
}

/* count hellos from rotating unproven ports, one every `gap` ns of the fake clock, counting the answers as they
 * go. */
static int hellos_answered(int count, int64_t gap)
{
    int answered = 0;
    for (int i = 0; i < count; i++) {
        clock_ns += gap;
        send_hello_from((uint16_t)(20000 + i % 40000), (uint8_t)i);
        answered += count_replies();
        assert_int_equal(to_card.next, to_card.count); /* taken: the fake card's queue starts again */
        to_card.count = to_card.next = 0;
    }
    return answered;
}

/* The most hellos the newcomers' bucket can have answered since the fake clock read start, full then: its burst
 * and what it refilled since (the fake clock steps on every read). */
static int refilled_since(int64_t start)
{
    return (int)((clock_ns - start) * GDB_UDP_NEWCOMER_HELLO_RATE / 1000000000);
}

static int budget_since(int64_t start) { return GDB_UDP_NEWCOMER_HELLO_RATE + refilled_since(start) + 1; }

/* Hellos from unproven senders share one bucket (checked before any HMAC): a burst of three times its rate
 * at once gets the rate answered, and the rest dropped before any MAC. The proven peer's hello (the relay
 * asking again) is answered from its own, however many forged ones came first, and that one is small. */
static void test_hellos_share_a_newcomers_budget_the_peer_has_its_own(void **state)
{
    (void)state;
    int64_t start = clock_ns;
    int answered = hellos_answered(3 * GDB_UDP_NEWCOMER_HELLO_RATE, 0);
    assert_in_range(answered, GDB_UDP_NEWCOMER_HELLO_RATE, budget_since(start));
    assert_int_equal(udp_counts().hellos_limited, 3 * GDB_UDP_NEWCOMER_HELLO_RATE - answered);
    assert_int_equal(gdb_udp_seam_auth()->counts.macs, 2 * answered);
    assert_nobody_attached();
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    send_hello_from(RELAY_PORT, 1); /* the shared bucket is empty; the proven peer's is not */
    assert_true(next_reply());
    assert_memory_equal(got, "KPG1n", 5);
    assert_int_equal(got_len, GDB_UDP_NONCE_LEN);
    count_replies();
    for (int i = 1; i < 2 * GDB_UDP_PEER_HELLO_RATE; i++) /* the hellos given first are the relay's own */
        send_hello_from(RELAY_PORT, (uint8_t)i);
    assert_int_equal(count_replies(), GDB_UDP_PEER_HELLO_RATE - 1);
    /* the peer gone, a second later the shared bucket holds tokens again */
    gdb_udp_transport.session(0, true, false);
    gdb_udp_transport.session(0, false, true);
    clock_ns += 1000000000;
    send_hello_from(50001, 2);
    assert_int_equal(count_replies(), 1);
}

/* Issue 40: blind forgers spent the newcomers' budget -- at 100 forged hellos a second, 8 of 20 relays got a
 * nonce within 30 s. Three seconds of a thousand forged hellos a second, a relay's hello among them every
 * 100 ms: every hello is answered, the relay's every time, and the relay then attaches with its nonce. A
 * flood of ten thousand a second, past the burst, is answered at the budget's rate and no faster: the CPU and
 * the reflection a flood buys stay bounded. */
static void test_a_thousand_forged_hellos_a_second_leave_every_relay_hello_answered(void **state)
{
    (void)state;
    int relay_answered = 0;
    for (int tenth = 0; tenth < 30; tenth++) {
        assert_int_equal(hellos_answered(99, 1000000), 99);
        send_hello_from(RELAY_PORT, 0xEE);
        relay_answered += next_reply() && got_len == GDB_UDP_NONCE_LEN;
        count_replies();
    }
    assert_int_equal(relay_answered, 30);
    assert_int_equal(udp_counts().hellos_limited, 0);
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    gdb_udp_transport.session(0, true, false);
    gdb_udp_transport.session(0, false, true);
    /* 10000 a second after the burst is spent: answered at the budget's rate, no more */
    clock_ns += 1000000000;
    int64_t drain = clock_ns;
    assert_int_equal(hellos_answered(GDB_UDP_NEWCOMER_HELLO_RATE, 0), GDB_UDP_NEWCOMER_HELLO_RATE);
    int64_t start = clock_ns;
    int answered = hellos_answered(10000, 100000); /* a second, and the fake clock's own steps */
    assert_in_range(answered, refilled_since(start) - 1, refilled_since(drain) + 1);
}

/* Issue 40: another allowlisted sender holding its own nonce (here another port) sends a valid datagram with
 * counter 2^64-1. Junk the transport does not act on moves no floor: the relay attaches after it. Acted on (it
 * attaches), it locks only its own session: when that ends, or once it is idle, the relay attaches. */
static void test_a_max_counter_locks_out_nobody_else(void **state)
{
    (void)state;
    uint16_t other = RELAY_PORT + 1, port;
    seals_from(other, "+", UINT64_MAX, key); /* not a request: dropped by the transport, not acted on */
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    assert_nobody_attached();
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    assert_int_not_equal(peer_ip(&port), 0);
    assert_int_equal(port, RELAY_PORT);
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    gdb_udp_transport.session(0, false, true); /* detached: the session ends */

    seals_from(other, "$?#3f", UINT64_MAX, key); /* attaches, its session's floor at the top */
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    assert_int_not_equal(peer_ip(&port), 0);
    assert_int_equal(port, other);
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "$?#3f");
    seals_from(other, "$g#67", 7, key);
    assert_string_equal(read_all(), ""); /* its own session is locked */
    gdb_udp_transport.session(0, false, true);
    relay_sends("$qSupported:multiprocess+#c6"); /* a fresh floor, and a fresh nonce */
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    assert_int_not_equal(peer_ip(&port), 0);
    assert_int_equal(port, RELAY_PORT);
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    stub_writes("+");
    assert_string_equal(next_sealed(), "+");

    /* the lock holder attached again and then silent past the idle time: the relay takes over */
    gdb_udp_transport.session(0, false, true);
    seals_from(other, "$?#3f", UINT64_MAX, key);
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    clock_ns += GDB_UDP_PEER_IDLE_NS + 1;
    relay_sends("$qSupported:multiprocess+#c6");
    running_delivers(); /* the attach already waits: the stop is the lock holder's, still to be taken */
    assert_int_not_equal(peer_ip(&port), 0);
    assert_int_equal(port, RELAY_PORT);
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "$?#3f$qSupported:multiprocess+#c6");
}

static struct netpoll_counts frame_counts(void)
{
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    return f;
}

/* Issue 40: under KPG1 no fragment is reassembled, the peer's address or not. The relay cuts a packet into
 * datagrams that need none (scripts/kprof_gdb_wire.py: 1472 bytes sealed, on a 1500-byte MTU) and the stub's
 * ring joins them; a datagram that came in fragments (an old relay's, or a forger's) is refused whole and
 * counted as not admitted, and a forged fragment with the peer's address and port between the pieces of a
 * packet changes nothing. */
static void test_no_fragment_is_reassembled_in_a_session(void **state)
{
    (void)state;
    enum { PIECE = 1472 - GDB_UDP_KEYED_OVERHEAD };
    static char packet[4001];
    static uint8_t sealed[sizeof packet + GDB_UDP_KEYED_OVERHEAD];
    memset(packet, 'x', sizeof packet - 1);
    packet[0] = '$';
    memcpy(packet + sizeof packet - 4, "#00", 3);
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    gdb_udp_transport.session(0, true, false);
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");

    size_t before = to_card.count;
    size_t n = seal_into(sealed, RELAY_PORT, packet, sizeof packet - 1, ++relay_counter, key);
    gdb_sends_from(GDB_IP, RELAY_PORT, (const char *)sealed, n);
    size_t fragments = to_card.count - before;
    assert_int_equal(fragments, 3); /* 4061 bytes sealed: three IPv4 fragments */
    assert_string_equal(read_all(), "");
    struct netpoll_counts f = frame_counts();
    assert_int_equal(f.not_admitted, fragments);
    assert_int_equal(f.fragments, 0);
    assert_int_equal(f.reassembled, 0);

    int forged = 0;
    for (size_t at = 0; at < sizeof packet - 1; at += PIECE) {
        size_t len = sizeof packet - 1 - at < PIECE ? sizeof packet - 1 - at : PIECE;
        before = to_card.count;
        gdb_sends_from(GDB_IP, RELAY_PORT, (const char *)sealed, seal_into(sealed, RELAY_PORT, packet + at, len,
                                                                          ++relay_counter, key));
        assert_int_equal(to_card.count, before + 1); /* one frame: no fragment */
        /* a forger's first fragment of another datagram, the peer's address and port, to the gdb port */
        gdb_sends_from(GDB_IP, RELAY_PORT, packet, 3000);
        to_card.count = before + 2;
        forged++;
    }
    assert_string_equal(read_all(), packet);
    f = frame_counts();
    assert_int_equal(f.not_admitted, fragments + (size_t)forged);
    assert_int_equal(f.fragments, 0);
    stub_writes("+");
    assert_string_equal(next_sealed(), "+");
}

/* The relay's pieces of one packet (1411 gdb bytes each, sealed 1472), from piece `from` up to (not) `to`, each
 * under a fresh counter. */
static void relay_sends_pieces(const char *packet, size_t len, size_t from, size_t to)
{
    static uint8_t sealed[GDB_UDP_KEYED_OVERHEAD + 1472];
    enum { PIECE = 1472 - GDB_UDP_KEYED_OVERHEAD };
    for (size_t i = from; i < to && i * PIECE < len; i++) {
        size_t n = len - i * PIECE < PIECE ? len - i * PIECE : PIECE;
        gdb_sends_from(GDB_IP, RELAY_PORT, (const char *)sealed,
                       seal_into(sealed, RELAY_PORT, packet + i * PIECE, n, ++relay_counter, key));
    }
}

/* A packet in pieces whose later pieces were lost, sent again whole (fresh counters): the stub's packet layer
 * reads it whole -- the first piece again is taken for the repeat of the copy already read (the rest completes
 * that copy), and after a later piece the resend starts over at its `$` (the packet layer restarts there). The
 * session's floor takes every piece, in order. */
static void test_a_cut_packet_sent_again_reaches_the_stub_whole(void **state)
{
    (void)state;
    static char packet[4001];
    memset(packet, 'y', sizeof packet - 1);
    packet[0] = '$';
    memcpy(packet + sizeof packet - 4, "#00", 3);
    const size_t len = sizeof packet - 1, piece = 1472 - GDB_UDP_KEYED_OVERHEAD;
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    gdb_udp_transport.session(0, true, false);
    read_all();

    relay_sends_pieces(packet, len, 0, 1); /* pieces 1 and 2 lost */
    static char got_bytes[3 * sizeof packet];
    strcpy(got_bytes, read_all());
    relay_sends_pieces(packet, len, 0, 3);
    strcat(got_bytes, read_all());
    assert_string_equal(got_bytes, packet);

    relay_sends_pieces(packet, len, 0, 2); /* piece 2 lost */
    strcpy(got_bytes, read_all());
    assert_int_equal(strlen(got_bytes), 2 * piece);
    relay_sends_pieces(packet, len, 0, 3);
    strcat(got_bytes, read_all());
    assert_string_equal(strrchr(got_bytes, '$'), packet); /* from the last `$`: the packet, whole */
    assert_int_equal(gdb_udp_seam_auth()->counts.replayed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_plain_and_forged_stop_nothing_and_get_nothing, setup_keyed),
        cmocka_unit_test_setup(test_hello_gets_its_answer_and_claims_nothing, setup_keyed),
        cmocka_unit_test_setup(test_sealed_packet_attaches_answer_sealed_replay_dropped_resend_answered, setup_keyed),
        cmocka_unit_test_setup(test_hellos_share_a_newcomers_budget_the_peer_has_its_own, setup_keyed),
        cmocka_unit_test_setup(test_a_thousand_forged_hellos_a_second_leave_every_relay_hello_answered, setup_keyed),
        cmocka_unit_test_setup(test_a_max_counter_locks_out_nobody_else, setup_keyed),
        cmocka_unit_test_setup(test_no_fragment_is_reassembled_in_a_session, setup_keyed),
        cmocka_unit_test_setup(test_a_cut_packet_sent_again_reaches_the_stub_whole, setup_keyed),
        /* the plain mode (no udpsh.key=): the same, under the empty key -- raw gdb bytes are refused */
        cmocka_unit_test_setup(test_plain_and_forged_stop_nothing_and_get_nothing, setup_plain),
        cmocka_unit_test_setup(test_hello_gets_its_answer_and_claims_nothing, setup_plain),
        cmocka_unit_test_setup(test_sealed_packet_attaches_answer_sealed_replay_dropped_resend_answered, setup_plain),
        cmocka_unit_test_setup(test_hellos_share_a_newcomers_budget_the_peer_has_its_own, setup_plain),
        cmocka_unit_test_setup(test_a_thousand_forged_hellos_a_second_leave_every_relay_hello_answered, setup_plain),
        cmocka_unit_test_setup(test_a_max_counter_locks_out_nobody_else, setup_plain),
        cmocka_unit_test_setup(test_no_fragment_is_reassembled_in_a_session, setup_plain),
        cmocka_unit_test_setup(test_a_cut_packet_sent_again_reaches_the_stub_whole, setup_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
