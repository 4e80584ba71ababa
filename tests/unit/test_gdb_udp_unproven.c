/* tests/unit/test_gdb_udp_unproven.c: gdbstub/udp.c's rules for senders nothing proves (the insecure mode, raw
 * gdb bytes): what looks like a stub's own reply is never taken, a newcomer opens only as gdb does, and a
 * repeat is answered once at most and within 3x. On the fake card of tests/unit/gdb_udp_fake_card.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gdbstub/udp.h"
#include "tests/unit/gdb_udp_fake_card.h"
#include "unit_main.h"

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
    assert_int_equal(running_delivers_from(GDB_IP, "$m0,4#fd"), GDB_UDP_NO_STOP);
    assert_int_equal(peer_ip(NULL), 0);
    assert_null(next_reply());
    /* gdb's opener attaches; then, from the peer in a session, reply-looking datagrams reach nobody */
    assert_int_equal(running_delivers_from(GDB_IP, "$qSupported:multiprocess+#c6"), GDB_UDP_STOP_ATTACH);
    begin();
    assert_string_equal(read_all(), "$qSupported:multiprocess+#c6");
    gdb_sends("$#00");
    gdb_sends("+$OK#9a");
    gdb_sends("-");
    gdb_sends("$E0f#db");
    assert_string_equal(read_all(), "");
    gdb_sends("+"); /* gdb's ack is what the stub waits for: it passes */
    assert_string_equal(read_all(), "+");
    assert_int_equal(udp_counts().reply_looking, 7 + 4);
    assert_null(next_reply());
}

/* Insecure mode: a repeat is answered from the remembered answer once at most, and only when that answer
 * keeps to 3x the repeat's datagram (headers counted). 100 forged copies of a short read buy nothing. */
static void test_repeats_answered_once_and_within_the_budget(void **state)
{
    (void)state;
    attach_and_answer();
    read_all();
    drain_replies();
    /* a read whose answer is large: its repeats get nothing */
    gdb_sends_and_stub_reads("$m0,40#2d");
    static char big[1 + 128 + 4];
    big[0] = '$';
    memset(big + 1, '0', 128);
    memcpy(big + 129, "#00", 4);
    stub_writes("+");
    stub_writes(big);
    drain_replies();
    for (int i = 0; i < 100; i++)
        gdb_sends("$m0,40#2d");
    assert_string_equal(read_all(), "");
    assert_null(next_reply());
    /* a packet whose answer is small: its first repeat is answered, the rest are not */
    gdb_sends("+");
    read_all();
    gdb_sends_and_stub_reads("$qC#b4");
    stub_writes("+");
    stub_writes("$QC1#c5");
    drain_replies();
    for (int i = 0; i < 5; i++)
        gdb_sends("$qC#b4");
    assert_string_equal(read_all(), "");
    assert_string_equal(next_reply(), "+$QC1#c5");
    assert_null(next_reply());
    struct gdb_udp_counts c = udp_counts();
    assert_int_equal(c.repeats, 1);
    assert_int_equal(c.repeats_dropped, 100 + 4);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_reply_looking_datagrams_are_never_answered, test_repeats_answered_once_and_within_the_budget)
