/* tests/unit/test_gdb_udp.c: gdbstub/udp.c, the gdb transport over UDP, on a fake card: what asks a
 * running machine to stop (Ctrl-C, one good packet; never garbage), the one-peer rule and the allowlist, the
 * flush that turns the stub's bytes into datagrams no larger than gdb reads, a repeated packet answered
 * again instead of run again (and a refused one run again), reordered datagrams, ARP. On the fake card of
 * tests/unit/gdb_udp_fake_card.h, whose "gdb" is a second netpoll that builds gdb's datagrams and reads ours
 * back; the insecure mode's rules for unproven senders are test_gdb_udp_unproven.c's. */
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
#include "tests/unit/gdb_udp_fake_card.h"
#include "tests/unit/gdb_udp_seam.h"
#include "unit_main.h"

/* ---- tests ---- */

static void test_a_good_packet_attaches_and_ctrl_c_interrupts(void **state)
{
    (void)state;
    assert_int_equal(running_delivers_from(GDB_IP, "+"), GDB_UDP_NO_STOP); /* a lone ack is no request */
    assert_int_equal(running_delivers_from(GDB_IP, "$qSupported:multiprocess+#c6"), GDB_UDP_STOP_ATTACH);
    assert_int_equal(gdb_udp_take_stop(), GDB_UDP_NO_STOP); /* taken once */
    uint16_t port;
    assert_int_equal(peer_ip(&port), GDB_IP);
    assert_int_equal(port, 40000);
    begin();
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    assert_int_equal(rx_interrupt_off, 1); /* polled: the card's receive interrupt is off */
    end(false);
    assert_int_equal(rx_interrupt_off, 0);
    assert_int_equal(running_delivers_from(GDB_IP, "\x03"), GDB_UDP_STOP_INTERRUPT);
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
    assert_int_equal(peer_ip(NULL), 0); /* nobody attached by sending junk */
    begin();
    assert_string_equal(read_all(), ""); /* and none of it waits for the stub */
    struct gdb_udp_counts c = udp_counts();
    assert_int_equal(c.dropped_idle, sizeof junk / sizeof junk[0]);
    assert_int_equal(c.stops, 0);
}

static void test_allowlist_and_one_peer_at_a_time(void **state)
{
    (void)state;
    assert_int_equal(running_delivers_from(BANNED_IP, "$?#3f"), GDB_UDP_NO_STOP);
    assert_int_equal(running_delivers_from(GDB_IP, "$?#3f"), GDB_UDP_STOP_ATTACH);
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
    assert_int_equal(running_delivers_from(OTHER_IP, "$?#3f"), GDB_UDP_NO_STOP); /* still attached while running */
    struct gdb_udp_counts c = udp_counts();
    assert_int_equal(c.not_allowed, 1);
    assert_int_equal(c.not_peer, 3);
    /* the peer detaches: the next one may attach */
    begin();
    end(true);
    assert_int_equal(running_delivers_from(OTHER_IP, "$?#3f"), GDB_UDP_STOP_ATTACH);
    assert_int_equal(peer_ip(NULL), OTHER_IP);
}

static void test_a_silent_peer_is_replaced_after_the_idle_time(void **state)
{
    (void)state;
    assert_int_equal(running_delivers_from(GDB_IP, "$?#3f"), GDB_UDP_STOP_ATTACH);
    clock_ns += GDB_UDP_PEER_IDLE_NS - 1000000;
    assert_int_equal(running_delivers_from(OTHER_IP, "$?#3f"), GDB_UDP_NO_STOP);
    clock_ns += 2000000;
    assert_int_equal(running_delivers_from(OTHER_IP, "$?#3f"), GDB_UDP_STOP_ATTACH);
    assert_int_equal(peer_ip(NULL), OTHER_IP);
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
    gdb_sends_and_stub_reads("$s#73");
    stub_writes("+");
    stub_writes("$T05thread:p01.01;#00");
    drain_replies();
    gdb_sends("$s#73");
    assert_string_equal(read_all(), ""); /* not given to the stub: it would step twice */
    /* the ack and the reply again, in one datagram */
    assert_string_equal(next_reply(), "+$T05thread:p01.01;#00");
    assert_null(next_reply());
    /* gdb acks; a later identical `s` is a new request and runs */
    gdb_sends_and_stub_reads("+");
    gdb_sends_and_stub_reads("$s#73");
    assert_int_equal(udp_counts().repeats, 1);
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
    gdb_sends_and_stub_reads("$M100,1:00#ff");
    stub_writes("-");
    gdb_sends_and_stub_reads("$M100,1:00#ff");
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
    assert_int_equal(running_delivers_from(GDB_IP, "$?#3f"), GDB_UDP_NO_STOP);
}

static void test_a_busy_card_gives_up_after_its_wait_and_the_next_flush_goes_out(void **state)
{
    (void)state;
    attach();
    card_busy = true;
    stub_writes("+");
    assert_null(next_reply());
    assert_int_equal(udp_counts().tx_failed, 1);
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
    assert_int_equal(udp_counts().card_stuck, 2);
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
    assert_int_equal(peer_ip(NULL), 0);
    gdb_sends_and_stub_reads("$?#3f");
    assert_int_not_equal(peer_ip(NULL), 0);
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
    assert_int_equal(running_delivers_from(GDB_IP, "$?#3f"), GDB_UDP_STOP_ATTACH);
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
    assert_int_equal(running_delivers_from(GDB_IP, "$s#73"), GDB_UDP_NO_STOP);
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
    struct gdb_udp_counts c = udp_counts();
    assert_int_equal(c.repeats, 1);
    assert_int_equal(c.repeats_dropped, 1);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_a_good_packet_attaches_and_ctrl_c_interrupts, test_garbage_to_a_running_machine_changes_nothing,
               test_allowlist_and_one_peer_at_a_time, test_a_silent_peer_is_replaced_after_the_idle_time,
               test_flush_sends_each_ack_and_packet_as_a_datagram_split_at_gdbs_buffer,
               test_a_bulk_write_splits_into_the_same_datagrams_as_putc,
               test_a_repeated_packet_is_answered_again_not_run_again,
               test_a_duplicate_still_waiting_is_dropped_and_a_refused_packet_runs_again,
               test_reordered_datagrams_are_read_in_arrival_order,
               test_large_packet_in_fragments_reaches_the_stub_whole,
               test_replies_go_to_the_mac_arp_gave_never_to_a_frames_source,
               test_arp_is_answered_and_nothing_sent_without_an_address,
               test_a_busy_card_gives_up_after_its_wait_and_the_next_flush_goes_out,
               test_under_the_stub_a_duplicated_step_steps_once, test_without_a_port_a_session_has_no_link,
               test_in_a_session_without_a_peer_junk_does_not_attach,
               test_a_card_held_by_a_stopped_cpu_ends_the_session_instead_of_hanging)
