/* tests/unit/test_gdb_udp_keyed.c: the gdb UDP transport (gdbstub/udp.c) speaking KPG1 (gdbstub/udp_auth.c
 * through tests/unit/gdb_udp_seam.c), keyed and plain (no key: the empty key), on a fake card: raw, forged
 * and replayed datagrams neither stop a running machine nor claim the peer nor get an answer; a hello gets
 * its nonce answer to the sender and nothing else, within a shared budget that the proven peer does not
 * share; a sealed packet attaches, the stub's answer goes out sealed under the peer's nonce; a relay's
 * retransmission (same packet, fresh counter) is answered again once, not run again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gdbstub/udp.h"
#include "kernel/lib/hmac.h"
#include "kernel/net/netpoll.h"
#include "tests/unit/fake_neighbour.h"
#include "tests/unit/gdb_udp_seam.h"

#define OUR_IP 0x0a00020f
#define GDB_IP 0x0a000202
#define GDB_PORT 1234
#define RELAY_PORT 40000

static const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t gdb_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };
static uint8_t secret[32], key[16];
static size_t key_len; /* 16 keyed, 0 plain */

#define QUEUE 64
static struct frames {
    size_t count, next;
    size_t len[QUEUE];
    uint8_t bytes[QUEUE][NETPOLL_FRAME_MAX];
} to_card, from_card;
static int64_t clock_ns;

static void push(struct frames *q, const uint8_t *frame, size_t len)
{
    assert_true(q->count < QUEUE);
    memcpy(q->bytes[q->count], frame, len);
    q->len[q->count++] = len;
}

static bool fake_transmit(const uint8_t *frame, size_t len)
{
    if (fake_neighbour_answers(frame, len, gdb_mac, gdb_udp_frame))
        return true; /* the relay's machine knows its address at once */
    push(&from_card, frame, len);
    return true;
}

static int fake_poll(int budget)
{
    int n = 0;
    while (n < budget && to_card.next < to_card.count) {
        size_t i = to_card.next++;
        gdb_udp_frame(to_card.bytes[i], to_card.len[i]);
        n++;
    }
    return n;
}

static bool fake_permits(uint32_t ip) { (void)ip; return true; }
static int64_t fake_now(void) { return clock_ns += 1000; }
static void fake_relax(void) { clock_ns += 1000000; }

static const struct gdb_udp_port fake_port = {
    .transmit = fake_transmit, .poll = fake_poll, .permits = fake_permits, .now_ns = fake_now, .relax = fake_relax,
};

static struct netpoll relay_side;
static uint8_t scratch[NETPOLL_FRAME_MAX];
static uint64_t relay_counter = 100;

static bool to_card_emit(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    push(&to_card, frame, len);
    return true;
}

static void relay_sends_raw(const uint8_t *bytes, size_t len)
{
    relay_side.next_id++;
    assert_true(netpoll_send_udp(&relay_side, our_mac, OUR_IP, GDB_PORT, bytes, len, scratch, to_card_emit, 0));
}

/* The datagram the relay makes for gdb's bytes (counter given, or the next); kept for a replay. */
static uint8_t last_sent[256];
static size_t last_sent_len;
static void relay_seals(const char *gdb, uint64_t counter, const uint8_t *with_key)
{
    uint8_t *d = last_sent;
    size_t n = 0;
    memcpy(d, "KPG1d", 5);
    n = 5;
    gdb_udp_session_nonce(gdb_udp_seam_auth(), GDB_IP, RELAY_PORT, d + n);
    n += 16;
    for (int i = 0; i < 8; i++)
        d[n++] = (uint8_t)(counter >> (56 - 8 * i));
    memcpy(d + n, gdb, strlen(gdb));
    n += strlen(gdb);
    hmac_sha256(with_key, with_key == key ? key_len : sizeof key, d, n, d + n);
    last_sent_len = n + 32;
    relay_sends_raw(d, last_sent_len);
}

static void relay_sends(const char *gdb)
{
    relay_seals(gdb, ++relay_counter, key);
}

static uint8_t got[GDB_UDP_INNER_MAX + GDB_UDP_SEAL_OVERHEAD];
static size_t got_len;
static bool next_reply(void)
{
    while (from_card.next < from_card.count) {
        size_t i = from_card.next++;
        struct netpoll_datagram dg;
        uint8_t reply[NETPOLL_FRAME_MIN];
        size_t rl;
        if (netpoll_receive(&relay_side, from_card.bytes[i], from_card.len[i], 0, &dg, reply, &rl) ==
            NETPOLL_DATAGRAM) {
            memcpy(got, dg.data, dg.len);
            got_len = dg.len;
            return true;
        }
    }
    return false;
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

static enum gdb_udp_stop running_delivers(void)
{
    while (to_card.next < to_card.count) {
        size_t i = to_card.next++;
        if (gdb_udp_wants(to_card.bytes[i], to_card.len[i]))
            gdb_udp_frame(to_card.bytes[i], to_card.len[i]);
    }
    return gdb_udp_take_stop();
}

static char read_buf[GDB_UDP_RX_RING + 1];
static const char *read_all(void)
{
    size_t n = 0;
    int c;
    while ((c = gdb_udp_transport.getc(0, 0)) >= 0)
        read_buf[n++] = (char)c;
    read_buf[n] = 0;
    return read_buf;
}

static void stub_writes(const char *text)
{
    for (const char *p = text; *p; p++)
        gdb_udp_transport.putc(0, *p);
    gdb_udp_transport.flush(0);
}

static int setup_with(size_t with_key_len)
{
    key_len = with_key_len;
    memset(&to_card, 0, sizeof to_card);
    memset(&from_card, 0, sizeof from_card);
    clock_ns = 1000000000;
    for (int i = 0; i < 32; i++)
        secret[i] = (uint8_t)(7 * i);
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(0x40 + i);
    gdb_udp_seam_key(secret, key_len ? key : NULL, key_len);
    gdb_udp_init(&fake_port, our_mac, GDB_PORT);
    gdb_udp_set_address(OUR_IP);
    netpoll_init(&relay_side, gdb_mac, GDB_IP, RELAY_PORT);
    relay_side.admit = fake_admit_any;
    return 0;
}

static int setup(void **state)
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
    uint32_t ip;
    uint16_t port;
    assert_false(gdb_udp_peer(&ip, &port));
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
    uint32_t ip;
    uint16_t port;
    assert_true(gdb_udp_peer(&ip, &port));
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
    struct netpoll np;
    netpoll_init(&np, gdb_mac, GDB_IP, port);
    np.next_id = relay_side.next_id++;
    assert_true(netpoll_send_udp(&np, our_mac, OUR_IP, GDB_PORT, hello, sizeof hello, scratch, to_card_emit, 0));
    running_delivers();
}

/* Frames the stub sent since last asked, to anyone. */
static int count_replies(void)
{
    int n = (int)(from_card.count - from_card.next);
    from_card.next = from_card.count;
    return n;
}

/* Hellos from unproven senders share one bucket (checked before any HMAC); the proven peer's hello (the
 * relay asking again) is answered from its own, however many forged ones came first. */
static void test_hellos_share_a_small_budget_the_peer_has_its_own(void **state)
{
    (void)state;
    for (int i = 0; i < 3 * GDB_UDP_HELLO_RATE; i++)
        send_hello_from((uint16_t)(50000 + i), (uint8_t)i);
    assert_int_equal(count_replies(), GDB_UDP_HELLO_RATE);
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.hellos_limited, 2 * GDB_UDP_HELLO_RATE);
    assert_int_equal(gdb_udp_seam_auth()->counts.macs, 2 * GDB_UDP_HELLO_RATE);
    assert_nobody_attached();
    relay_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    send_hello_from(RELAY_PORT, 1); /* the shared bucket is empty; the proven peer's is not */
    assert_true(next_reply());
    assert_memory_equal(got, "KPG1n", 5);
    assert_int_equal(got_len, GDB_UDP_NONCE_LEN);
    /* the peer gone, a second later the shared bucket holds tokens again */
    gdb_udp_transport.session(0, true, false);
    gdb_udp_transport.session(0, false, true);
    clock_ns += 1000000000;
    send_hello_from(50001, 2);
    assert_int_equal(count_replies(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_plain_and_forged_stop_nothing_and_get_nothing, setup),
        cmocka_unit_test_setup(test_hello_gets_its_answer_and_claims_nothing, setup),
        cmocka_unit_test_setup(test_sealed_packet_attaches_answer_sealed_replay_dropped_resend_answered, setup),
        cmocka_unit_test_setup(test_hellos_share_a_small_budget_the_peer_has_its_own, setup),
        /* the plain mode (no udpsh.key=): the same, under the empty key -- raw gdb bytes are refused */
        cmocka_unit_test_setup(test_plain_and_forged_stop_nothing_and_get_nothing, setup_plain),
        cmocka_unit_test_setup(test_hello_gets_its_answer_and_claims_nothing, setup_plain),
        cmocka_unit_test_setup(test_sealed_packet_attaches_answer_sealed_replay_dropped_resend_answered, setup_plain),
        cmocka_unit_test_setup(test_hellos_share_a_small_budget_the_peer_has_its_own, setup_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
