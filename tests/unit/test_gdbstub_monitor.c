/* tests/unit/test_gdbstub_monitor.c: gdb's monitor commands through a stub session (gdbstub/monitor.c) --
 * rdmsr, wrmsr, pmu output split over several O packets, help, unknown and malformed commands, an empty line,
 * the link lost during output, no breakpoint allowed in the debugger's own code, and poweroff.
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

/* ---- monitor commands ---- */

/* gdb sends `monitor <command>`; the stub answers with `O` packets of output and then OK. */
static void expect_monitor(const char *command, const char *const outputs[], size_t n)
{
    char packet[1024];
    int len = snprintf(packet, sizeof packet, "qRcmd,%s", hex_of(command));
    assert_true(len > 0 && (size_t)len < sizeof packet);
    fake_send_packet(packet, (size_t)len);
    for (size_t i = 0; i < n; i++) {
        static char reply[2 * GDB_MONITOR_OUT + 2];
        snprintf(reply, sizeof reply, "O%s", hex_of(outputs[i]));
        if (i == 0)
            fake_expect_ack_reply(reply);
        else
            fake_expect_reply(reply);
        fake_send_raw("+", 1);
    }
    fake_expect_reply("OK");
    fake_send_raw("+", 1);
}

static void expect_monitor_line(const char *command, const char *output)
{
    const char *outputs[] = { output };
    expect_monitor(command, outputs, 1);
}

/* The debugger's own code takes no breakpoint of either kind (mapped memory, so only that refuses it): E01,
 * the machine not asked, nothing planted; its edges are exact; `monitor nobreak` says where it is. */
static void test_no_breakpoint_in_the_debugger_s_own_code(void **state)
{
    (void)state;
    fake_exchange("Z0,ffffffff80002000,1", "E01");
    fake_exchange("Z0,ffffffff80002123,1", "E01");
    fake_exchange("Z0,ffffffff800023ff,1", "E01");
    fake_exchange("Z1,ffffffff80002000,1", "E01");
    fake_exchange("Z1,ffffffff800023ff,1", "E01");
    assert_int_equal(fake_break_insert_calls, 0);
    fake_exchange("Z0,ffffffff80001fff,1", "OK");
    fake_exchange("Z0,ffffffff80002400,1", "OK");
    fake_exchange("Z1,ffffffff80002400,1", "OK");
    /* Removing one that cannot be there is a no-op, as for any address without a breakpoint. */
    fake_exchange("z0,ffffffff80002000,1", "OK");
    expect_monitor_line("nobreak", "no breakpoints in the debugger's own code, 0xffffffff80002000-0xffffffff80002400 "
                                   "(Z answers E01): the stub, the stop/resume path and the trap, NMI and interrupt "
                                   "entry run there\n");
    play_then_continue(GDB_STOP_ATTACH, 0);
    assert_false(fake_sw_break_at(HIGH(0x2000)));
    assert_false(fake_hw_break_at(HIGH(0x2000)));
    assert_true(fake_sw_break_at(HIGH(0x1fff)));
    assert_true(fake_sw_break_at(HIGH(0x2400)));
    assert_int_equal(fake_sw_break_count(), 2);
    assert_int_equal(fake_hw_break_count(), 1);
}

static void test_monitor_rdmsr(void **state)
{
    (void)state;
    expect_monitor_line("rdmsr 0x10", "cpu 1 msr 0x10 = 0x00000000000003e9\n");
    expect_monitor_line("rdmsr 16", "cpu 1 msr 0x10 = 0x00000000000003e9\n");
    expect_monitor_line("rdmsr cpu 3 0x10", "cpu 3 msr 0x10 = 0x00000000000003eb\n");
    expect_monitor_line("  rdmsr\tcpu 0   0x38F ", "cpu 0 msr 0x38f = 0x000000070000000f\n");
    fake_exchange("Hg1", "OK");
    expect_monitor_line("rdmsr 0x10", "cpu 0 msr 0x10 = 0x00000000000003e8\n");
    /* A faulting MSR is an error line, not a crash. */
    expect_monitor_line("rdmsr 0xdead", "error: cpu 0 msr 0xdead: rdmsr faulted\n");
    expect_monitor_line("rdmsr cpu 2 0xffffffff", "error: cpu 2 msr 0xffffffff: rdmsr faulted\n");
    expect_monitor_line("rdmsr", "usage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr 0x10 0x11", "usage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr cpu 1", "usage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr cpu 4 0x10", "error: no cpu '4' (there are 4)\n");
    expect_monitor_line("rdmsr cpu x 0x10", "error: no cpu 'x' (there are 4)\n");
    expect_monitor_line("rdmsr cpu", "error: no cpu '' (there are 4)\n");
    expect_monitor_line("rdmsr 0x100000000", "error: bad MSR number '0x100000000'\nusage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr 38f", "error: bad MSR number '38f'\nusage: rdmsr [cpu N] MSR\n");
    play(GDB_STOP_ATTACH, 1, GDB_END_LINK_LOST);
}

static void test_monitor_wrmsr(void **state)
{
    (void)state;
    expect_monitor_line("wrmsr cpu 2 0x38f 0x1", "cpu 2 msr 0x38f <- 0x0000000000000001\n");
    expect_monitor_line("wrmsr 0x10 12345", "cpu 0 msr 0x10 <- 0x0000000000003039\n");
    expect_monitor_line("wrmsr 0xc0de 1", "error: cpu 0 msr 0xc0de: wrmsr faulted\n");
    expect_monitor_line("wrmsr 0x38f", "usage: wrmsr [cpu N] MSR VALUE\n");
    expect_monitor_line("wrmsr 0x38f 1 2", "usage: wrmsr [cpu N] MSR VALUE\n");
    expect_monitor_line("wrmsr 0x38f -1", "error: bad value '-1'\nusage: wrmsr [cpu N] MSR VALUE\n");
    expect_monitor_line("wrmsr 0x38f 0x10000000000000000",
                        "error: bad value '0x10000000000000000'\nusage: wrmsr [cpu N] MSR VALUE\n");
    run_to_link_loss();
    assert_int_equal(fake_msr_value(2, FAKE_MSR_B), 1);
    assert_int_equal(fake_msr_value(1, FAKE_MSR_B), 0x70000000full);
    assert_int_equal(fake_msr_value(0, FAKE_MSR_A), 12345);
    assert_int_equal(fake_msr_value(0, FAKE_MSR_B), 0x70000000full);
}

static void test_monitor_pmu_in_several_packets(void **state)
{
    (void)state;
    /* More than one O packet's worth, delivered by the target in small pieces. */
    static char text[3000];
    size_t at = 0;
    for (unsigned line = 0; at + 80 < sizeof text; line++)
        at += (size_t)snprintf(text + at, sizeof text - at, "cpu %u: armed=%u ctr=0x%012x status=0x%x lvt=0x%x\n",
                               line % 4, line % 2, line * 0x1234567u, line, 0x400 | line);
    fake_pmu_text = text;
    fake_pmu_piece = 37;
    static char parts[3][GDB_MONITOR_OUT + 1];
    const char *outputs[3];
    size_t n = 0;
    for (size_t off = 0; off < at; off += GDB_MONITOR_OUT) {
        snprintf(parts[n], sizeof parts[n], "%.*s", GDB_MONITOR_OUT, text + off);
        outputs[n] = parts[n];
        n++;
    }
    assert_int_equal(n, 3);
    expect_monitor("pmu", outputs, n);
    expect_monitor_line("pmu now", "usage: pmu\n");
    run_to_link_loss();
}

/* gdb sends packet and vanishes before acknowledging the answer: everything the stub wrote (*len bytes), which
 * must be the ack and an O packet. */
static const char *output_after_last_packet(const char *packet, size_t *len)
{
    fake_send_packet(packet, strlen(packet));
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    const char *out = fake_link_output(len);
    assert_true(*len > 3 && memcmp(out, "+$O", 3) == 0);
    return out;
}

static void test_monitor_help_unknown_and_malformed(void **state)
{
    (void)state;
    /* The help text is one O packet naming every command (gdb then vanishes before acknowledging it). */
    size_t len;
    const char *out = output_after_last_packet("qRcmd,68656c70", &len);
    assert_true(len > 4);
    const char *end = memchr(out, '#', len);
    assert_non_null(end);
    static char help[2048];
    size_t hex_len = (size_t)(end - (out + 3));
    assert_true(hex_len % 2 == 0 && hex_len / 2 < sizeof help);
    assert_true(hex_decode(help, out + 3, hex_len / 2));
    help[hex_len / 2] = '\0';
    assert_non_null(strstr(help, "help"));
    assert_non_null(strstr(help, "rdmsr [cpu N] MSR"));
    assert_non_null(strstr(help, "wrmsr [cpu N] MSR VALUE"));
    assert_non_null(strstr(help, "pmu"));
    assert_non_null(strstr(help, "poweroff"));

    fake_link_reset();
    expect_monitor_line("frob 1", "error: unknown command 'frob'; try 'monitor help'\n");
    expect_monitor_line("a b c d e f g h i j k l m n o p q", "error: too many words\n");
    char longer[GDB_MONITOR_LINE + 2];
    memset(longer, 'r', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    expect_monitor_line(longer, "error: command longer than 256 characters\n");
    fake_exchange("qRcmd,6", "E22");
    fake_exchange("qRcmd,7a7", "E22");
    fake_exchange("qRcmd,zz", "E22");
    run_to_link_loss();
}

static void test_monitor_empty_line_is_help(void **state)
{
    (void)state;
    size_t len;
    output_after_last_packet("qRcmd,", &len);
}

static void test_link_lost_during_monitor_output(void **state)
{
    (void)state;
    static char text[2500];
    memset(text, 'p', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    fake_pmu_text = text;
    char packet[64];
    snprintf(packet, sizeof packet, "qRcmd,%s", hex_of("pmu"));
    fake_send_packet(packet, strlen(packet));
    /* gdb takes the first O packet and vanishes. */
    static char first[2 * GDB_MONITOR_OUT + 2];
    static char chunk[GDB_MONITOR_OUT + 1];
    memset(chunk, 'p', GDB_MONITOR_OUT);
    snprintf(first, sizeof first, "O%s", hex_of(chunk));
    fake_expect_ack_reply(first);
    fake_send_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    /* The second O packet went out unanswered; the session ended there. */
    const char *mismatch = fake_link_finish();
    assert_non_null(mismatch);
    assert_non_null(strstr(mismatch, "unexpected \"$O70707070"));
    assert_int_equal(fake_resume_calls, 1);
}

/* `monitor poweroff` is what powers the machine off (gdb's `k` only detaches): the target's poweroff is called
 * once, after its line reached gdb. The fake machine cannot be powered off, and says so, as a machine without
 * ACPI S5 would: the command then finishes with the reason and OK, and the machine stays stopped until gdb
 * resumes it. */
static void test_monitor_poweroff(void **state)
{
    (void)state;
    static const char said[] = "poweroff: powering the machine off\n";
    const char *outputs[] = { said, "poweroff: failed: the fake machine has no power to cut\n" };
    expect_monitor("poweroff", outputs, 2);
    expect_monitor_line("poweroff now", "usage: poweroff\n");
    play_then_continue(GDB_STOP_ATTACH, 0);
    assert_int_equal(fake_poweroff_calls, 1);
    assert_int_equal(fake_resume_calls, 1);

    /* What the stub had written when the power was to go: the packet's ack and the line, whole, nothing after. */
    size_t len;
    const char *out = fake_link_output(&len);
    static char line_packet[2 * sizeof said + 2];
    snprintf(line_packet, sizeof line_packet, "O%s", hex_of(said));
    size_t framed_len;
    char *framed = fake_frame(line_packet, strlen(line_packet), &framed_len);
    assert_true(fake_poweroff_sent == 1 + framed_len && fake_poweroff_sent <= len);
    assert_memory_equal(out, "+", 1);
    assert_memory_equal(out + 1, framed, framed_len);
    free(framed);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_no_breakpoint_in_the_debugger_s_own_code, test_monitor_rdmsr, test_monitor_wrmsr,
               test_monitor_pmu_in_several_packets, test_monitor_help_unknown_and_malformed,
               test_monitor_empty_line_is_help, test_link_lost_during_monitor_output, test_monitor_poweroff)
