/* tests/unit/test_gdbstub_session.c: a gdb stub session (gdbstub/stub.c, commands.c over packet.c) from its
 * framing to what it tells gdb -- bad checksums and retransmission, a nak, a lost ack, junk between packets,
 * oversized and empty packets, unknown commands, a link that dies mid-packet or in a checksum; stop replies
 * (?, swbreak/hwbreak once supported, sent when gdb waits, none to a new debugger); qSupported, threads as
 * CPUs and thread selection; the target description whole and in parts.
 * Scripts of {packet gdb sends, reply expected} against the fake machine: gdbstub_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/hex.h"
#include "fake_target.h"
#include "gdbstub/commands.h"
#include "gdbstub/monitor.h"
#include "gdbstub/packet.h"
#include "gdbstub/regs.h"
#include "gdbstub/stub.h"
#include "gdbstub_fixture.h"
#include "unit_main.h"

/* ---- framing ---- */

static void test_bad_checksum_is_refused_then_retransmission_answered(void **state)
{
    (void)state;
    fake_send_raw("$qC#00", 6);
    fake_expect_raw("-", 1);
    fake_exchange("qC", "QC1");
    /* Checksum digits that are not hex, and a packet cut short by a new `$`. */
    fake_send_raw("$qC#zz", 6);
    fake_expect_raw("-", 1);
    fake_send_raw("$qAtt$qC#b4", 11);
    fake_expect_ack_reply("QC1");
    fake_send_raw("+", 1);
    run_to_link_loss();
}

static void test_nak_of_a_reply_retransmits_it(void **state)
{
    (void)state;
    fake_send_packet("qC", 2);
    fake_expect_ack_reply("QC1");
    fake_send_raw("-", 1);
    fake_expect_reply("QC1");
    fake_send_raw("-", 1);
    fake_expect_reply("QC1");
    fake_send_raw("+", 1);
    fake_exchange("qAttached", "1");
    run_to_link_loss();
}

static void test_lost_ack_then_next_packet(void **state)
{
    (void)state;
    /* gdb's `+` never arrives; its next packet does, and is answered. */
    fake_send_packet("qC", 2);
    fake_expect_ack_reply("QC1");
    fake_exchange("qAttached", "1");
    run_to_link_loss();
}

static void test_junk_between_packets_is_ignored(void **state)
{
    (void)state;
    fake_send_raw("hello\r\n+-#00", 12);
    fake_exchange("qC", "QC1");
    fake_send_raw("\xff\x00 }*", 5);
    fake_exchange("qAttached", "1");
    /* Ctrl-C while stopped has nothing to interrupt. */
    fake_send_raw("\x03", 1);
    fake_exchange("qC", "QC1");
    run_to_link_loss();
}

static void test_packet_longer_than_advertised(void **state)
{
    (void)state;
    char *big = malloc(GDB_PACKET_SIZE + 100);
    assert_non_null(big);
    memset(big, 'a', GDB_PACKET_SIZE + 100);
    big[0] = 'q';
    /* One byte too long: acknowledged (the checksum is right), answered E07, nothing overflowed. */
    fake_send_packet(big, GDB_PACKET_SIZE + 1);
    fake_expect_ack_reply("E07");
    fake_send_raw("+", 1);
    /* Much too long with a wrong checksum: refused. */
    fake_send_raw("$", 1);
    fake_send_raw(big, GDB_PACKET_SIZE + 100);
    fake_send_raw("#00", 3);
    fake_expect_raw("-", 1);
    /* Exactly the advertised size is accepted (an unknown query: the empty reply). */
    fake_send_packet(big, GDB_PACKET_SIZE);
    fake_expect_ack_reply("");
    fake_send_raw("+", 1);
    fake_exchange("qC", "QC1");
    run_to_link_loss();
    free(big);
}

static void test_empty_packet_and_unknown_commands(void **state)
{
    (void)state;
    fake_send_raw("$#00", 4);
    fake_expect_ack_reply("");
    fake_send_raw("+", 1);
    const char *unknown[] = { "vMustReplyEmpty", "qOffsets", "qTStatus", "!", "QStartNoAckMode", "bc", "i",
                              "qSymbol::", "qXfer:threads:read::0,fff", "vKill;1", "vContX", "y", "qCRC:1000,4",
                              "qSupportedX" };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        fake_exchange(unknown[i], "");
    run_to_link_loss();
}

static void test_disconnect_mid_packet_ends_the_session(void **state)
{
    (void)state;
    fake_exchange("Z0,ffffffff80000010,1", "OK");
    fake_exchange("Z1,ffffffff80000020,1", "OK");
    fake_send_raw("$m10", 4);
    play(GDB_STOP_ATTACH, 1, GDB_END_LINK_LOST);
    /* Nothing is left to stop the machine for a debugger that is gone, and the machine runs. */
    expect_resumed_clean();
}

static void test_disconnect_waiting_for_an_ack(void **state)
{
    (void)state;
    fake_send_packet("qC", 2);
    fake_expect_ack_reply("QC1");
    play(GDB_STOP_ATTACH, 0, GDB_END_LINK_LOST);
    assert_int_equal(fake_resume_calls, 1);
}

static void test_disconnect_in_checksum(void **state)
{
    (void)state;
    fake_send_raw("$qC#b", 5);
    run_to_link_loss();
}

/* ---- stop replies ---- */

static void test_question_mark_reports_the_stop(void **state)
{
    (void)state;
    struct {
        enum stop_reason reason;
        unsigned cpu;
        const char *reply;
    } cases[] = {
        { GDB_STOP_ATTACH, 0, "T05thread:1;" },
        { GDB_STOP_ATTACH, 2, "T05thread:3;" },
        { GDB_STOP_INTERRUPT, 3, "T02thread:4;" },
        { GDB_STOP_STEP, 1, "T05thread:2;" },
        { GDB_STOP_TRAP, 0, "T05thread:1;" },
        { GDB_STOP_PANIC, 0, "T06thread:1;" },
        /* gdb has not said it understands swbreak/hwbreak, so they are not sent. */
        { GDB_STOP_SW_BREAK, 0, "T05thread:1;" },
        { GDB_STOP_HW_BREAK, 0, "T05thread:1;" },
        /* A CPU number beyond the machine is taken as CPU 0. */
        { GDB_STOP_ATTACH, 7, "T05thread:1;" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_link_reset();
        fake_exchange("?", cases[i].reply);
        fake_exchange("?x", "E22");
        assert_int_equal(run(cases[i].reason, cases[i].cpu), GDB_END_LINK_LOST);
        SCRIPT_PLAYED();
    }
}

static void test_swbreak_and_hwbreak_once_gdb_supports_them(void **state)
{
    (void)state;
    fake_exchange("qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386",
                  "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("?", "T05thread:2;swbreak:;");
    play(GDB_STOP_SW_BREAK, 1, GDB_END_LINK_LOST);

    fake_link_reset();
    fake_exchange("?", "T05thread:1;hwbreak:;");
    play(GDB_STOP_HW_BREAK, 0, GDB_END_LINK_LOST);

    /* A gdb that lists only one of them gets only that one. */
    fake_link_reset();
    fake_exchange("qSupported:hwbreak+", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("?", "T05thread:1;");
    play(GDB_STOP_SW_BREAK, 0, GDB_END_LINK_LOST);
}

static void test_stop_reply_sent_when_gdb_waits_for_it(void **state)
{
    (void)state;
    fake_exchange("qSupported:swbreak+", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    play_then_continue(GDB_STOP_ATTACH, 0);

    /* The breakpoint is hit: gdb hears of it unasked. */
    fake_link_reset();
    fake_expect_reply("T05thread:3;swbreak:;");
    fake_send_raw("+", 1);
    fake_send_packet("vCont;s:3;c", 11);
    fake_expect_raw("+", 1);
    play(GDB_STOP_SW_BREAK, 2, GDB_END_STEP);

    /* The step completes. A NAK of the stop reply gets it again. */
    fake_link_reset();
    fake_expect_reply("T05thread:3;");
    fake_send_raw("-", 1);
    fake_expect_reply("T05thread:3;");
    fake_send_raw("+", 1);
    play_then_continue(GDB_STOP_STEP, 2);

    /* Ctrl-C. */
    fake_link_reset();
    fake_expect_reply("T02thread:1;");
    fake_send_raw("+", 1);
    fake_exchange("D", "OK");
    play(GDB_STOP_INTERRUPT, 0, GDB_END_DETACH);

    /* After a detach nobody waits: the next stop says nothing until asked. */
    fake_link_reset();
    fake_exchange("?", "T05thread:1;swbreak:;");
    play(GDB_STOP_SW_BREAK, 0, GDB_END_LINK_LOST);
}

static void test_no_stop_reply_to_a_new_debugger(void **state)
{
    (void)state;
    play_then_continue(GDB_STOP_ATTACH, 0);
    /* That gdb went away; a new one attaches by sending a packet while the machine runs. */
    fake_link_reset();
    fake_exchange("qSupported", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("?", "T05thread:1;");
    run_to_link_loss();
}

/* ---- queries and threads ---- */

static void test_supported_and_attached(void **state)
{
    (void)state;
    fake_exchange("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;vContSupported+",
                  "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("qAttached", "1");
    fake_exchange("qAttached:1", "1");
    run_to_link_loss();
}

static void test_supported_forgets_breakpoints_of_a_previous_debugger(void **state)
{
    (void)state;
    fake_exchange("Z0,1000,1", "OK");
    fake_exchange("Z1,2000,1", "OK");
    play_then_continue(GDB_STOP_ATTACH, 0);
    assert_int_equal(fake_sw_break_count(), 1);
    assert_int_equal(fake_hw_break_count(), 1);

    fake_link_reset();
    fake_exchange("qSupported:swbreak+", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    run_to_link_loss();
    assert_int_equal(fake_sw_break_count(), 0);
    assert_int_equal(fake_hw_break_count(), 0);
}

static void test_threads_are_cpus(void **state)
{
    (void)state;
    fake_exchange("qC", "QC3");
    fake_exchange("qfThreadInfo", "m1,2,3,4");
    fake_exchange("qsThreadInfo", "l");
    fake_exchange("qsThreadInfo", "l");
    fake_exchange("qfThreadInfo", "m1,2,3,4");
    fake_exchange("qThreadExtraInfo,1", hex_of("cpu 0, task shell (pid 1)"));
    fake_exchange("qThreadExtraInfo,4", hex_of("cpu 3, task idle (pid 0)"));
    fake_exchange("qThreadExtraInfo,5", "E03");
    fake_exchange("qThreadExtraInfo,0", "E03");
    fake_exchange("qThreadExtraInfo,-1", "E03");
    fake_exchange("qThreadExtraInfo,", "E22");
    fake_exchange("qThreadExtraInfo,2x", "E22");
    fake_exchange("qThreadExtraInfo,ffffffffffffffffff", "E22");
    for (unsigned t = 1; t <= FAKE_CPUS; t++) {
        char packet[16];
        snprintf(packet, sizeof packet, "T%x", t);
        fake_exchange(packet, "OK");
    }
    fake_exchange("T5", "E03");
    fake_exchange("T0", "E03");
    fake_exchange("T-1", "E03");
    fake_exchange("Tfffffffff", "E03");
    fake_exchange("T", "E22");
    fake_exchange("Tz", "E22");
    fake_exchange("T1,", "E22");
    play(GDB_STOP_ATTACH, 2, GDB_END_LINK_LOST);
}

static void test_select_thread(void **state)
{
    (void)state;
    fake_regs[0][GDB_RAX] = 0x10;
    fake_regs[1][GDB_RAX] = 0x11;
    fake_regs[2][GDB_RAX] = 0x12;
    fake_exchange("p0", "1000000000000000");
    fake_exchange("qC", "QC1");
    fake_exchange("Hg2", "OK");
    fake_exchange("p0", "1100000000000000");
    fake_exchange("qC", "QC2"); /* the current thread is the one Hg chose */
    fake_exchange("Hg3", "OK");
    fake_exchange("p0", "1200000000000000");
    fake_exchange("Hc4", "OK");
    fake_exchange("qC", "QC3"); /* Hc is for resuming, not the current thread */
    fake_exchange("Hc-1", "OK");
    fake_exchange("Hg0", "OK"); /* any: the CPU that stopped */
    fake_exchange("p0", "1000000000000000");
    fake_exchange("qC", "QC1");
    fake_exchange("Hg3", "OK");
    fake_exchange("Hg-1", "OK");
    fake_exchange("p0", "1000000000000000");
    fake_exchange("Hg5", "E03");
    fake_exchange("Hgz", "E22");
    fake_exchange("Hg", "E22");
    fake_exchange("Hg1x", "E22");
    fake_exchange("Hx1", "E22");
    fake_exchange("H", "E22");
    fake_exchange("Hc-1", "OK");
    fake_exchange("Hc0", "OK");
    fake_exchange("Hc4", "OK");
    fake_exchange("Hc9", "E03");
    run_to_link_loss();
}


/* ---- target description ---- */

static void test_target_xml_whole_and_in_parts(void **state)
{
    (void)state;
    size_t total = gdb_target_xml_length();
    assert_true(total > 0 && total < GDB_PACKET_SIZE - 1);
    char *xml = malloc(total + 1);
    assert_non_null(xml);
    assert_int_equal(gdb_target_xml_read(0, xml, total), total);
    xml[total] = '\0';
    char *reply = malloc(total + 2);
    assert_non_null(reply);

    /* All at once, as gdb asks. */
    snprintf(reply, total + 2, "l%s", xml);
    fake_exchange("qXfer:features:read:target.xml:0,3ffb", reply);
    /* In 0x100-byte parts. */
    for (size_t off = 0; off < total; off += 0x100) {
        char packet[64];
        snprintf(packet, sizeof packet, "qXfer:features:read:target.xml:%zx,100", off);
        size_t n = total - off < 0x100 ? total - off : 0x100;
        snprintf(reply, total + 2, "%c%.*s", off + n < total ? 'm' : 'l', (int)n, xml + off);
        fake_exchange(packet, reply);
    }
    char packet[64];
    snprintf(packet, sizeof packet, "qXfer:features:read:target.xml:%zx,100", total);
    fake_exchange(packet, "l");
    snprintf(packet, sizeof packet, "qXfer:features:read:target.xml:%zx,100", total + 1);
    fake_exchange(packet, "E22");
    /* Nothing asked for: `l` alone -- gdb refuses an `m` without data. */
    fake_exchange("qXfer:features:read:target.xml:0,0", "l");
    fake_exchange("qXfer:features:read:target.xml:10,0", "l");
    fake_exchange("qXfer:features:read:other.xml:0,100", "E22");
    fake_exchange("qXfer:features:read:target.xml:0", "E22");
    fake_exchange("qXfer:features:read:target.xml:,100", "E22");
    fake_exchange("qXfer:features:read:target.xml:0,100,", "E22");
    fake_exchange("qXfer:features:read:target.xml:ffffffffffffffff,ffffffffffffffff", "E22");
    run_to_link_loss();
    free(reply);
    free(xml);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_bad_checksum_is_refused_then_retransmission_answered, test_nak_of_a_reply_retransmits_it,
               test_lost_ack_then_next_packet, test_junk_between_packets_is_ignored, test_packet_longer_than_advertised,
               test_empty_packet_and_unknown_commands, test_disconnect_mid_packet_ends_the_session,
               test_disconnect_waiting_for_an_ack, test_disconnect_in_checksum, test_question_mark_reports_the_stop,
               test_swbreak_and_hwbreak_once_gdb_supports_them, test_stop_reply_sent_when_gdb_waits_for_it,
               test_no_stop_reply_to_a_new_debugger, test_supported_and_attached,
               test_supported_forgets_breakpoints_of_a_previous_debugger, test_threads_are_cpus, test_select_thread,
               test_target_xml_whole_and_in_parts)
