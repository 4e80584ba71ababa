/* tests/unit/test_gdb_udp.c: gdbstub/udp.c, the gdb transport over UDP, on a fake card: what asks a
 * running machine to stop (Ctrl-C, one good packet; never garbage), the one-peer rule and the allowlist, the
 * flush that turns the stub's bytes into datagrams no larger than gdb reads, a repeated packet answered
 * again instead of run again (and a refused one run again), reordered datagrams, ARP. The "peer" is a second
 * netpoll that builds gdb's datagrams and reads ours back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_target.h"
#include "gdbstub/stub.h"
#include "gdbstub/udp.h"
#include "kernel/net/netpoll.h"
#include "tests/unit/fake_neighbour.h"
#include "tests/unit/gdb_udp_seam.h"

#define OUR_IP 0x0a00020f
#define GDB_IP 0x0a000202
#define OTHER_IP 0x0a000203
#define BANNED_IP 0x0b000001
#define GDB_PORT 1234

static const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t gdb_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };

/* ---- the fake card ---- */

#define QUEUE 160
static struct frames {
    size_t count, next;
    size_t len[QUEUE];
    uint8_t bytes[QUEUE][NETPOLL_FRAME_MAX];
} to_card, from_card; /* frames waiting for poll; frames transmitted */
static int64_t clock_ns;
static bool card_busy;
static int64_t rx_busy_until; /* poll says NETDEV_POLL_BUSY until then (someone stopped inside it) */
static bool neighbour_silent;  /* gdb's machine does not answer ARP */

static bool push(struct frames *q, const uint8_t *frame, size_t len)
{
    assert_true(q->count < QUEUE);
    memcpy(q->bytes[q->count], frame, len);
    q->len[q->count++] = len;
    return true;
}

static bool fake_transmit(const uint8_t *frame, size_t len)
{
    if (card_busy)
        return false;
    if (!neighbour_silent && fake_neighbour_answers(frame, len, gdb_mac, gdb_udp_frame))
        return true; /* gdb's machine knows its address at once */
    return push(&from_card, frame, len);
}

static int fake_poll(int budget)
{
    if (clock_ns < rx_busy_until)
        return -1;
    int n = 0;
    while (n < budget && to_card.next < to_card.count) {
        size_t i = to_card.next++;
        gdb_udp_frame(to_card.bytes[i], to_card.len[i]);
        n++;
    }
    return n;
}

static bool fake_permits(uint32_t ip) { return ip != BANNED_IP; }
static int rx_interrupt_off; /* sessions the card's receive interrupt is off for */
static void fake_session(bool begin) { rx_interrupt_off += begin ? 1 : -1; }
static int64_t fake_now(void) { return clock_ns += 1000; }
static void fake_relax(void) { clock_ns += 1000000; }

static const struct gdb_udp_port fake_port = {
    .transmit = fake_transmit, .poll = fake_poll, .permits = fake_permits, .now_ns = fake_now, .relax = fake_relax,
    .session = fake_session,
};

/* ---- gdb's side ---- */

static struct netpoll gdb_side;
static uint8_t scratch[NETPOLL_FRAME_MAX];

static bool to_card_emit(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    return push(&to_card, frame, len);
}

/* A datagram from ip:port to the stub's port, queued on the card. */
static void gdb_sends_from(uint32_t ip, uint16_t port, const char *bytes, size_t len)
{
    struct netpoll np;
    netpoll_init(&np, gdb_mac, ip, port);
    np.next_id = gdb_side.next_id++;
    assert_true(netpoll_send_udp(&np, our_mac, OUR_IP, GDB_PORT, (const uint8_t *)bytes, len, scratch,
                                 to_card_emit, 0));
}

static void gdb_sends(const char *text)
{
    gdb_sends_from(GDB_IP, 40000, text, strlen(text));
}

/* The next datagram the stub sent, as gdb receives it; NULL when there is none. */
static char got[GDB_UDP_INNER_MAX + 1];
static size_t got_len;
static const char *next_reply(void)
{
    while (from_card.next < from_card.count) {
        size_t i = from_card.next++;
        struct netpoll_datagram dg;
        uint8_t reply[NETPOLL_FRAME_MIN];
        size_t rl;
        if (netpoll_receive(&gdb_side, from_card.bytes[i], from_card.len[i], 0, &dg, reply, &rl) ==
            NETPOLL_DATAGRAM) {
            memcpy(got, dg.data, dg.len);
            got[dg.len] = 0;
            got_len = dg.len;
            return got;
        }
    }
    return NULL;
}

/* Everything the stub's getc gives now (polling the card once dry), as a string. */
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

static int setup(void **state)
{
    (void)state;
    memset(&to_card, 0, sizeof to_card);
    memset(&from_card, 0, sizeof from_card);
    clock_ns = 1000000000;
    card_busy = false;
    rx_busy_until = 0;
    rx_interrupt_off = 0;
    neighbour_silent = false;
    static const uint8_t zero[SHA256_DIGEST_SIZE];
    gdb_udp_seam_key(zero, NULL, 0);
    gdb_udp_seam_insecure(); /* gdb's raw bytes: what these tests drive the transport with */
    gdb_udp_init(&fake_port, our_mac, GDB_PORT);
    gdb_udp_set_address(OUR_IP);
    netpoll_init(&gdb_side, gdb_mac, GDB_IP, 40000);
    gdb_side.admit = fake_admit_any;
    return 0;
}

/* The network task's view while the machine runs: frames handed over, then the stop they asked for. */
static enum gdb_udp_stop running_delivers(void)
{
    while (to_card.next < to_card.count) {
        size_t i = to_card.next++;
        if (gdb_udp_wants(to_card.bytes[i], to_card.len[i]))
            gdb_udp_frame(to_card.bytes[i], to_card.len[i]);
    }
    return gdb_udp_take_stop();
}

static void begin(void) { gdb_udp_transport.session(0, true, false); }
static void end(bool gone) { gdb_udp_transport.session(0, false, gone); }

/* gdb opens (`?`) and the machine stops for it: a session, the opener read. */
static void attach(void)
{
    gdb_sends("$?#3f");
    running_delivers();
    begin();
    read_all();
}

/* attach, and the stub answers the opener; gdb's ack of that answer waits on the card. */
static void attach_and_answer(void)
{
    attach();
    stub_writes("+");
    stub_writes("$S05#b8");
    gdb_sends("+");
}

/* ---- tests ---- */

static void test_a_good_packet_attaches_and_ctrl_c_interrupts(void **state)
{
    (void)state;
    gdb_sends("+");
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP); /* a lone ack is no request */
    gdb_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    assert_int_equal(gdb_udp_take_stop(), GDB_UDP_NO_STOP); /* taken once */
    uint32_t ip;
    uint16_t port;
    assert_true(gdb_udp_peer(&ip, &port));
    assert_int_equal(ip, GDB_IP);
    assert_int_equal(port, 40000);
    begin();
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    assert_int_equal(rx_interrupt_off, 1); /* polled: the card's receive interrupt is off */
    end(false);
    assert_int_equal(rx_interrupt_off, 0);
    gdb_sends("\x03");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_INTERRUPT);
    begin();
    assert_string_equal(read_all(), "\x03");
}

static void test_garbage_to_a_running_machine_changes_nothing(void **state)
{
    (void)state;
    static const char *const junk[] = { "hello", "$g#00", "$g#6", "$g#67$m0,1#fb", "$g#67x", "\x03\x03", "$$#00",
                                        "", "#67", "$g", "$g#6z" };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        gdb_sends_from(GDB_IP, 40000, junk[i], strlen(junk[i]));
        assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    }
    uint32_t ip;
    uint16_t port;
    assert_false(gdb_udp_peer(&ip, &port)); /* nobody attached by sending junk */
    begin();
    assert_string_equal(read_all(), ""); /* and none of it waits for the stub */
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.dropped_idle, sizeof junk / sizeof junk[0]);
    assert_int_equal(c.stops, 0);
}

static void test_allowlist_and_one_peer_at_a_time(void **state)
{
    (void)state;
    gdb_sends_from(BANNED_IP, 40000, "$?#3f", 5);
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    gdb_sends("$?#3f");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    begin();
    assert_string_equal(read_all(), "$?#3f");
    /* another address, and another port of the same address, are not the peer */
    gdb_sends_from(OTHER_IP, 40000, "$g#67", 5);
    gdb_sends_from(GDB_IP, 40001, "$g#67", 5);
    assert_string_equal(read_all(), "");
    stub_writes("+");
    assert_non_null(next_reply()); /* replies go to the peer */
    assert_null(next_reply());
    end(false);
    gdb_sends_from(OTHER_IP, 40000, "$?#3f", 5);
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP); /* still attached while running */
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.not_allowed, 1);
    assert_int_equal(c.not_peer, 3);
    /* the peer detaches: the next one may attach */
    begin();
    end(true);
    gdb_sends_from(OTHER_IP, 40000, "$?#3f", 5);
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    uint32_t ip;
    uint16_t port;
    assert_true(gdb_udp_peer(&ip, &port));
    assert_int_equal(ip, OTHER_IP);
}

static void test_a_silent_peer_is_replaced_after_the_idle_time(void **state)
{
    (void)state;
    gdb_sends("$?#3f");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    clock_ns += GDB_UDP_PEER_IDLE_NS - 1000000;
    gdb_sends_from(OTHER_IP, 40000, "$?#3f", 5);
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    clock_ns += 2000000;
    gdb_sends_from(OTHER_IP, 40000, "$?#3f", 5);
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    uint32_t ip;
    uint16_t port;
    assert_true(gdb_udp_peer(&ip, &port));
    assert_int_equal(ip, OTHER_IP);
}

static void test_flush_sends_each_ack_and_packet_as_a_datagram_split_at_gdbs_buffer(void **state)
{
    (void)state;
    attach();
    stub_writes("+");
    assert_string_equal(next_reply(), "+");
    stub_writes("$OK#9a");
    assert_string_equal(next_reply(), "$OK#9a");
    assert_null(next_reply());
    /* nothing goes out before a flush */
    gdb_udp_transport.putc(0, '$');
    assert_null(next_reply());
    /* a reply longer than gdb's read buffer: datagrams of at most 8192 bytes, in order, nothing lost */
    static char longer[20001];
    for (size_t i = 0; i < sizeof longer - 1; i++)
        longer[i] = (char)('a' + i % 26);
    stub_writes(longer);
    static char joined[20002];
    size_t at = 0;
    const char *r;
    int datagrams = 0;
    while ((r = next_reply()) != NULL) {
        assert_true(got_len <= GDB_UDP_DATAGRAM_MAX);
        memcpy(joined + at, r, got_len);
        at += got_len;
        datagrams++;
    }
    assert_int_equal(datagrams, 3);
    assert_int_equal(at, 20001);
    assert_int_equal(joined[0], '$');
    assert_memory_equal(joined + 1, longer, 20000);
}

/* The bulk write (a reply's payload in one call) goes out as putc byte by byte would: the same datagrams, split
 * at the same places, whatever putc gathered before it. */
static void test_a_bulk_write_splits_into_the_same_datagrams_as_putc(void **state)
{
    (void)state;
    attach();
    static char payload[20001];
    for (size_t i = 0; i < sizeof payload - 1; i++)
        payload[i] = (char)('A' + i % 23);
    static char by_putc[3][GDB_UDP_DATAGRAM_MAX + 1];
    size_t putc_len[3];
    gdb_udp_transport.putc(0, '$');
    stub_writes(payload);
    for (int d = 0; d < 3; d++) {
        const char *r = next_reply();
        assert_non_null(r);
        memcpy(by_putc[d], r, got_len);
        putc_len[d] = got_len;
    }
    assert_null(next_reply());
    gdb_udp_transport.putc(0, '$');
    gdb_udp_transport.write(0, payload, sizeof payload - 1);
    gdb_udp_transport.flush(0);
    int datagrams = 0;
    const char *r;
    while ((r = next_reply()) != NULL) {
        assert_true(datagrams < 3);
        assert_int_equal(got_len, putc_len[datagrams]);
        assert_memory_equal(r, by_putc[datagrams], got_len);
        datagrams++;
    }
    assert_int_equal(datagrams, 3);
    /* an empty write sends nothing */
    gdb_udp_transport.write(0, payload, 0);
    gdb_udp_transport.flush(0);
    assert_null(next_reply());
}

static void test_a_repeated_packet_is_answered_again_not_run_again(void **state)
{
    (void)state;
    attach_and_answer();
    assert_string_equal(read_all(), "+");
    /* `s`, answered; then the same `s` again before gdb acked the reply (it never saw it) */
    gdb_sends("$s#73");
    assert_string_equal(read_all(), "$s#73");
    stub_writes("+");
    stub_writes("$T05thread:p01.01;#00");
    while (next_reply())
        ;
    gdb_sends("$s#73");
    assert_string_equal(read_all(), ""); /* not given to the stub: it would step twice */
    /* the ack and the reply again, in one datagram */
    assert_string_equal(next_reply(), "+$T05thread:p01.01;#00");
    assert_null(next_reply());
    /* gdb acks; a later identical `s` is a new request and runs */
    gdb_sends("+");
    assert_string_equal(read_all(), "+");
    gdb_sends("$s#73");
    assert_string_equal(read_all(), "$s#73");
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.repeats, 1);
}

static void test_a_duplicate_still_waiting_is_dropped_and_a_refused_packet_runs_again(void **state)
{
    (void)state;
    gdb_sends("$?#3f");
    running_delivers();
    begin();
    /* two copies arrive before the stub reads the first: it sees one */
    gdb_sends("$m100,4#8c");
    gdb_sends("$m100,4#8c");
    assert_string_equal(read_all(), "$?#3f$m100,4#8c");
    /* a packet the stub refused (`-`, bad checksum on its side) comes again: that copy must run */
    stub_writes("+");
    stub_writes("$OK#9a");
    gdb_sends("+");
    read_all();
    gdb_sends("$M100,1:00#ff");
    assert_string_equal(read_all(), "$M100,1:00#ff");
    stub_writes("-");
    gdb_sends("$M100,1:00#ff");
    assert_string_equal(read_all(), "$M100,1:00#ff");
}

static void test_reordered_datagrams_are_read_in_arrival_order(void **state)
{
    (void)state;
    attach();
    /* gdb's ack overtaken by its next packet: the stub reads both, the packet-layer copes */
    gdb_sends("$g#67");
    gdb_sends("+");
    assert_string_equal(read_all(), "$g#67+");
}

static void test_large_packet_in_fragments_reaches_the_stub_whole(void **state)
{
    (void)state;
    attach();
    static char packet[12001];
    memset(packet, 'x', sizeof packet - 1);
    packet[0] = '$';
    gdb_sends(packet);
    assert_true(to_card.count - to_card.next > 1); /* it did need fragments */
    assert_string_equal(read_all(), packet);
}

/* Replies go where ARP says the peer is, never to the Ethernet source of its datagrams; with no answer to our
 * question, the question goes out and the reply does not (gdb retransmits). */
static void test_replies_go_to_the_mac_arp_gave_never_to_a_frames_source(void **state)
{
    (void)state;
    static const uint8_t steered[6] = { 0x02, 0xde, 0xad, 0x00, 0x00, 0x01 };
    neighbour_silent = true;
    gdb_sends("$?#3f");
    memcpy(to_card.bytes[to_card.count - 1] + 6, steered, 6);
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    begin();
    read_all();
    stub_writes("+$S05#b8");
    /* questions, broadcast (the session's start waited for an answer, asking again), and no datagram */
    assert_true(from_card.count >= 1);
    for (size_t i = 0; i < from_card.count; i++) {
        assert_int_equal(from_card.bytes[i][12], 0x08);
        assert_int_equal(from_card.bytes[i][13], 0x06);
        assert_int_equal(from_card.bytes[i][14 + 7], 1);
    }
    assert_null(next_reply());
    /* the answer comes; gdb's retransmission is answered from memory, to the MAC ARP gave */
    neighbour_silent = false;
    clock_ns += NETPOLL_ARP_RETRY_NS;
    gdb_sends("$?#3f");
    memcpy(to_card.bytes[to_card.count - 1] + 6, steered, 6);
    read_all();
    assert_string_equal(next_reply(), "+$S05#b8");
    assert_memory_equal(from_card.bytes[from_card.count - 1], gdb_mac, 6);
    for (size_t i = 0; i < from_card.count; i++)
        assert_memory_not_equal(from_card.bytes[i], steered, 6);
}

static void test_arp_is_answered_and_nothing_sent_without_an_address(void **state)
{
    (void)state;
    uint8_t f[60] = { 0 };
    memset(f, 0xff, 6);
    memcpy(f + 6, gdb_mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    static const uint8_t arp[] = { 0, 1, 8, 0, 6, 4, 0, 1, 0x52, 0x55, 0x0a, 0, 2, 2, 10, 0, 2, 2, 0, 0, 0, 0, 0, 0,
                                   10, 0, 2, 15 };
    memcpy(f + 14, arp, sizeof arp);
    gdb_udp_frame(f, 60);
    assert_int_equal(from_card.count, 1);
    assert_int_equal(from_card.bytes[0][14 + 7], 2);
    gdb_udp_set_address(0);
    gdb_udp_frame(f, 60);
    assert_int_equal(from_card.count, 1);
    gdb_sends("$?#3f");
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
}

static void test_a_busy_card_gives_up_after_its_wait_and_the_next_flush_goes_out(void **state)
{
    (void)state;
    attach();
    card_busy = true;
    stub_writes("+");
    assert_null(next_reply());
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.tx_failed, 1);
    card_busy = false;
    stub_writes("$OK#9a");
    assert_string_equal(next_reply(), "$OK#9a");
}

/* A CPU stopped inside the card's poll (or holding its transmit lock) leaves the session no card: after
 * GDB_UDP_CARD_STUCK_NS (or GDB_UDP_TX_STUCK_DATAGRAMS refused datagrams) getc reports the link lost, so the
 * stub resumes the machine instead of waiting for good; a shorter hold is waited out. */
static void test_a_card_held_by_a_stopped_cpu_ends_the_session_instead_of_hanging(void **state)
{
    (void)state;
    attach();
    rx_busy_until = clock_ns + GDB_UDP_CARD_STUCK_NS / 2;
    gdb_sends("$g#67");
    assert_int_equal(gdb_udp_transport.getc(0, -1), '$'); /* waited out, then read */
    read_all();
    rx_busy_until = clock_ns + 100 * GDB_UDP_CARD_STUCK_NS;
    int64_t t0 = clock_ns;
    assert_int_equal(gdb_udp_transport.getc(0, -1), -1);
    assert_true(clock_ns - t0 >= GDB_UDP_CARD_STUCK_NS && clock_ns - t0 < 2 * GDB_UDP_CARD_STUCK_NS);
    rx_busy_until = 0;
    card_busy = true;
    for (int i = 0; i < GDB_UDP_TX_STUCK_DATAGRAMS; i++)
        stub_writes("$OK#9a");
    assert_int_equal(gdb_udp_transport.getc(0, -1), -1);
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.card_stuck, 2);
}

/* A session with nobody attached (the last peer detached; a panic's session): a newcomer's junk neither
 * reaches the stub nor makes it the peer; its good packet does. */
static void test_in_a_session_without_a_peer_junk_does_not_attach(void **state)
{
    (void)state;
    begin();
    gdb_sends("hello");
    gdb_sends("+");
    assert_string_equal(read_all(), "");
    uint32_t ip;
    uint16_t port;
    assert_false(gdb_udp_peer(&ip, &port));
    gdb_sends("$?#3f");
    assert_string_equal(read_all(), "$?#3f");
    assert_true(gdb_udp_peer(&ip, &port));
    end(false);
    assert_int_equal(gdb_udp_take_stop(), GDB_UDP_NO_STOP); /* nothing asked of the running machine */
}

/* gdb.udp= refused (port 0): a session that lands on this transport anyway (gdb=panic without COM2) finds
 * no link at once, instead of polling a card nobody set up. */
static void test_without_a_port_a_session_has_no_link(void **state)
{
    (void)state;
    gdb_udp_init(&fake_port, our_mac, 0);
    assert_false(gdb_udp_enabled());
    begin();
    assert_int_equal(gdb_udp_transport.getc(0, -1), -1);
    stub_writes("+");
    end(true);
    assert_int_equal(from_card.count, 0);
}

/* The whole stub on this transport: gdb's `s` is duplicated on the way (or retransmitted because the ack was
 * lost) before and after the step's stop reply -- the machine steps once, and gdb gets the answer again once
 * (never twice: a forger's copies buy nothing). */
static void test_under_the_stub_a_duplicated_step_steps_once(void **state)
{
    (void)state;
    fake_target_reset();
    gdb_stub_reset();
    gdb_sends("$?#3f");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    gdb_sends("+");
    gdb_sends("$s#73");
    begin();
    assert_int_equal(gdb_stub_session(&fake_target, &gdb_udp_transport, GDB_STOP_ATTACH, 0), GDB_END_STEP);
    end(false);
    assert_int_equal(fake_resume_calls, 1);
    assert_int_equal(fake_resume_step_cpu, 0);
    assert_string_equal(next_reply(), "+");
    assert_non_null(next_reply()); /* the answer to `?` */
    assert_string_equal(next_reply(), "+");
    /* the copy arrives while the CPU steps: answered with the ack again, no new stop */
    gdb_sends("$s#73");
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    assert_string_equal(next_reply(), "+");
    /* the step's trap: the stub owes gdb the stop reply; another copy comes before gdb's ack of it */
    begin();
    gdb_sends("$s#73");
    gdb_sends("+");
    gdb_sends("$D#44");
    gdb_sends("+");
    assert_int_equal(gdb_stub_session(&fake_target, &gdb_udp_transport, GDB_STOP_STEP, 0), GDB_END_DETACH);
    end(true);
    assert_int_equal(fake_resume_calls, 2); /* the step, then the detach: never a second step */
    assert_int_equal(fake_resume_step_cpu, -1);
    const char *r = next_reply();
    assert_non_null(r);
    assert_true(r[0] == '$' && (r[1] == 'T' || r[1] == 'S')); /* the stop reply; the second copy got nothing */
    assert_string_equal(next_reply(), "+");
    assert_string_equal(next_reply(), "$OK#9a");
    assert_null(next_reply());
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.repeats, 1);
    assert_int_equal(c.repeats_dropped, 1);
}

/* Insecure mode: nobody is proven. What looks like a stub's own reply -- a lone nak, `$OK`, `$Enn`, the empty
 * packet, after any acks -- is taken from nobody (newcomer or peer): two stubs, or a stub and an echo, would
 * answer each other for ever. A newcomer opens only as gdb does (Ctrl-C, `?`, a `q` query). */
static void test_reply_looking_datagrams_are_never_answered(void **state)
{
    (void)state;
    static const char *const replies[] = { "$#00", "+$#00", "$OK#9a", "+$OK#9a", "$E01#a6", "-", "+-", "+" };
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        gdb_sends(replies[i]);
        assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    }
    /* a well-formed packet gdb never opens with: another stub's stop reply, a memory read */
    gdb_sends("$S05#b8");
    gdb_sends("$m0,4#fd");
    assert_int_equal(running_delivers(), GDB_UDP_NO_STOP);
    uint32_t ip;
    uint16_t port;
    assert_false(gdb_udp_peer(&ip, &port));
    assert_null(next_reply());
    /* gdb's opener attaches; then, from the peer in a session, reply-looking datagrams reach nobody */
    gdb_sends("$qSupported:multiprocess+#c6");
    assert_int_equal(running_delivers(), GDB_UDP_STOP_ATTACH);
    begin();
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    gdb_sends("$#00");
    gdb_sends("+$OK#9a");
    gdb_sends("-");
    gdb_sends("$E0f#db");
    assert_string_equal(read_all(), "");
    gdb_sends("+"); /* gdb's ack is what the stub waits for: it passes */
    assert_string_equal(read_all(), "+");
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.reply_looking, 7 + 4);
    assert_null(next_reply());
}

/* Insecure mode: a repeat is answered from the remembered answer once at most, and only when that answer
 * keeps to 3x the repeat's datagram (headers counted). 100 forged copies of a short read buy nothing. */
static void test_repeats_answered_once_and_within_the_budget(void **state)
{
    (void)state;
    attach_and_answer();
    read_all();
    while (next_reply())
        ;
    /* a read whose answer is large: its repeats get nothing */
    gdb_sends("$m0,40#2d");
    assert_string_equal(read_all(), "$m0,40#2d");
    static char big[1 + 128 + 4];
    big[0] = '$';
    memset(big + 1, '0', 128);
    memcpy(big + 129, "#00", 4);
    stub_writes("+");
    stub_writes(big);
    while (next_reply())
        ;
    for (int i = 0; i < 100; i++)
        gdb_sends("$m0,40#2d");
    assert_string_equal(read_all(), "");
    assert_null(next_reply());
    /* a packet whose answer is small: its first repeat is answered, the rest are not */
    gdb_sends("+");
    read_all();
    gdb_sends("$qC#b4");
    assert_string_equal(read_all(), "$qC#b4");
    stub_writes("+");
    stub_writes("$QC1#c5");
    while (next_reply())
        ;
    for (int i = 0; i < 5; i++)
        gdb_sends("$qC#b4");
    assert_string_equal(read_all(), "");
    assert_string_equal(next_reply(), "+$QC1#c5");
    assert_null(next_reply());
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    assert_int_equal(c.repeats, 1);
    assert_int_equal(c.repeats_dropped, 100 + 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_good_packet_attaches_and_ctrl_c_interrupts, setup),
        cmocka_unit_test_setup(test_garbage_to_a_running_machine_changes_nothing, setup),
        cmocka_unit_test_setup(test_allowlist_and_one_peer_at_a_time, setup),
        cmocka_unit_test_setup(test_a_silent_peer_is_replaced_after_the_idle_time, setup),
        cmocka_unit_test_setup(test_flush_sends_each_ack_and_packet_as_a_datagram_split_at_gdbs_buffer, setup),
        cmocka_unit_test_setup(test_a_bulk_write_splits_into_the_same_datagrams_as_putc, setup),
        cmocka_unit_test_setup(test_a_repeated_packet_is_answered_again_not_run_again, setup),
        cmocka_unit_test_setup(test_a_duplicate_still_waiting_is_dropped_and_a_refused_packet_runs_again, setup),
        cmocka_unit_test_setup(test_reordered_datagrams_are_read_in_arrival_order, setup),
        cmocka_unit_test_setup(test_large_packet_in_fragments_reaches_the_stub_whole, setup),
        cmocka_unit_test_setup(test_replies_go_to_the_mac_arp_gave_never_to_a_frames_source, setup),
        cmocka_unit_test_setup(test_arp_is_answered_and_nothing_sent_without_an_address, setup),
        cmocka_unit_test_setup(test_a_busy_card_gives_up_after_its_wait_and_the_next_flush_goes_out, setup),
        cmocka_unit_test_setup(test_under_the_stub_a_duplicated_step_steps_once, setup),
        cmocka_unit_test_setup(test_without_a_port_a_session_has_no_link, setup),
        cmocka_unit_test_setup(test_in_a_session_without_a_peer_junk_does_not_attach, setup),
        cmocka_unit_test_setup(test_a_card_held_by_a_stopped_cpu_ends_the_session_instead_of_hanging, setup),
        cmocka_unit_test_setup(test_reply_looking_datagrams_are_never_answered, setup),
        cmocka_unit_test_setup(test_repeats_answered_once_and_within_the_budget, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
