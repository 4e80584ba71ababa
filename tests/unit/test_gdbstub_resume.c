/* tests/unit/test_gdbstub_resume.c: how a gdb stub session ends (gdbstub/stub.c, commands.c) -- continue and
 * step, continue at an address, malformed resume packets, vCont and its refusals, detach, and kill (a detach
 * too), each with the session end it returns.
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

/* ---- resuming ---- */

/* Plays one resume packet and checks what was resumed. */
static void expect_resume(const char *before1, const char *before2, const char *packet, enum gdb_session_end end,
                          int step_cpu, bool others_stay)
{
    fake_target_reset();
    fake_link_reset();
    gdb_stub_reset();
    if (before1 != NULL)
        fake_exchange(before1, "OK");
    if (before2 != NULL)
        fake_exchange(before2, "OK");
    fake_send_packet(packet, strlen(packet));
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_SW_BREAK, 1), end);
    const char *mismatch = fake_link_finish();
    if (mismatch != NULL)
        fail_msg("%s: %s", packet, mismatch);
    bool step = end == GDB_END_STEP;
    if (fake_resume_calls != 1 || fake_resume_step_cpu != step_cpu || fake_resume_others_stay != others_stay ||
        fake_resume_step != step)
        fail_msg("%s: resume called %u times, last (%d, step %d, stay %d); expected (%d, %d, %d)", packet,
                 fake_resume_calls, fake_resume_step_cpu, fake_resume_step, fake_resume_others_stay, step_cpu,
                 step, others_stay);
}

static void test_continue_and_step(void **state)
{
    (void)state;
    expect_resume(NULL, NULL, "c", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "C05", GDB_END_CONTINUE, -1, false);
    /* s steps gdb's current CPU (the one that stopped, or Hg's) while the others run... */
    expect_resume(NULL, NULL, "s", GDB_END_STEP, 1, false);
    expect_resume("Hg4", NULL, "s", GDB_END_STEP, 3, false);
    expect_resume(NULL, NULL, "S05", GDB_END_STEP, 1, false);
    /* ...or the CPU Hc names, alone. */
    expect_resume("Hc3", NULL, "s", GDB_END_STEP, 2, true);
    expect_resume("Hc3", "Hc-1", "s", GDB_END_STEP, 1, false);
    expect_resume("Hc1", "Hc0", "s", GDB_END_STEP, 1, false);
}

static void test_continue_at_an_address(void **state)
{
    (void)state;
    expect_resume(NULL, NULL, "cffffffff80001234", GDB_END_CONTINUE, -1, false);
    assert_int_equal(fake_regs[1][GDB_RIP], 0xffffffff80001234ull);
    expect_resume("Hg3", NULL, "s1000", GDB_END_STEP, 2, false);
    assert_int_equal(fake_regs[2][GDB_RIP], 0x1000);
    assert_int_equal(fake_regs[1][GDB_RIP], 0);
    expect_resume(NULL, NULL, "C05;2000", GDB_END_CONTINUE, -1, false);
    assert_int_equal(fake_regs[1][GDB_RIP], 0x2000);
}

static void test_malformed_resume_packets(void **state)
{
    (void)state;
    fake_exchange("cz", "E22");
    fake_exchange("c1000x", "E22");
    fake_exchange("C", "E22");
    fake_exchange("C05;", "E22");
    fake_exchange("C05x", "E22");
    fake_exchange("Sxx", "E22");
    fake_exchange("s;", "E22");
    fake_readonly_reg = GDB_RIP;
    fake_exchange("c1000", "E05");
    run_to_link_loss();
    /* None of them resumed anything but the final loss of the link. */
    assert_int_equal(fake_resume_calls, 1);
}

static void test_vcont(void **state)
{
    (void)state;
    fake_exchange("vCont?", "vCont;c;C;s;S");
    run_to_link_loss();

    expect_resume(NULL, NULL, "vCont;c", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;c:-1", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;C05", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;s:2;c", GDB_END_STEP, 1, false);
    expect_resume(NULL, NULL, "vCont;S05:3;C05", GDB_END_STEP, 2, false);
    expect_resume(NULL, NULL, "vCont;s:2", GDB_END_STEP, 1, true);
    expect_resume(NULL, NULL, "vCont;s:4", GDB_END_STEP, 3, true);
    expect_resume("Hg3", NULL, "vCont;s:0;c", GDB_END_STEP, 2, false);
    /* The leftmost action for a thread wins: CPU 2 continues, and with the default so does everyone. */
    expect_resume(NULL, NULL, "vCont;c:2;s:2;c", GDB_END_CONTINUE, -1, false);
    /* A step for a thread after the default is never reached. */
    expect_resume(NULL, NULL, "vCont;c;s:2", GDB_END_CONTINUE, -1, false);
    /* Naming every other CPU is the same as the default. */
    expect_resume(NULL, NULL, "vCont;s:1;c:2;c:3;c:4", GDB_END_STEP, 0, false);
    expect_resume(NULL, NULL, "vCont;c:1;c:2;c:3;c:4", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;s:1;s:1;c", GDB_END_STEP, 0, false);
    /* One CPU running alone, the others held (gdb's scheduler-locking); the leftmost rule decides it too. */
    expect_resume(NULL, NULL, "vCont;c:1", GDB_END_CONTINUE, 0, true);
    expect_resume(NULL, NULL, "vCont;C05:3", GDB_END_CONTINUE, 2, true);
    expect_resume("Hg4", NULL, "vCont;c:0", GDB_END_CONTINUE, 3, true);
    expect_resume(NULL, NULL, "vCont;c:2;s:2", GDB_END_CONTINUE, 1, true);
}

static void test_vcont_refusals(void **state)
{
    (void)state;
    refuse_vconts(fake_exchange);
    run_to_link_loss();
    assert_int_equal(fake_resume_calls, 1); /* only the final loss of the link */
}

static void test_detach(void **state)
{
    (void)state;
    fake_exchange("Z0,1000,1", "OK");
    fake_exchange("Z1,2000,1", "OK");
    fake_exchange("Dx", "E22");
    fake_exchange("D;", "E22");
    fake_exchange("D;1", "OK");
    play(GDB_STOP_ATTACH, 0, GDB_END_DETACH);
    expect_resumed_clean();

    /* Detach whose OK is never acknowledged: the machine resumes all the same. */
    fake_target_reset();
    fake_link_reset();
    fake_send_packet("D", 1);
    fake_expect_ack_reply("OK");
    play(GDB_STOP_ATTACH, 0, GDB_END_DETACH);
    assert_int_equal(fake_resume_calls, 1);
}

/* k is a detach (a debugger that quits without detaching sends it): its ack and X09, breakpoints of both kinds
 * removed, every CPU released, the session over -- and nothing powered off. */
static void test_kill_detaches(void **state)
{
    (void)state;
    fake_exchange("Z0,1000,1", "OK");
    fake_exchange("Z1,2000,1", "OK");
    fake_exchange("kx", "E22");
    fake_send_packet("k", 1);
    fake_expect_ack_reply("X09");
    play(GDB_STOP_ATTACH, 0, GDB_END_KILL);
    expect_resumed_clean();
    assert_int_equal(fake_poweroff_calls, 0);

    /* The X09 is sent once and not waited on (gdb never reads it): nothing after it is read, not even its ack. */
    fake_target_reset();
    fake_link_reset();
    fake_send_packet("k", 1);
    fake_expect_ack_reply("X09");
    fake_send_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_KILL);
    const char *mismatch = fake_link_finish();
    assert_non_null(mismatch);
    assert_non_null(strstr(mismatch, "never played"));
    assert_int_equal(fake_resume_calls, 1);
}

/* The debugger that sent k is gone: gdb resumed the machine, it stopped at a breakpoint and the stop reply went
 * out, and the debugger quit with k; the next stop is not reported to anyone unasked, as after D. */
static void test_kill_owes_no_stop_reply(void **state)
{
    (void)state;
    continue_session();
    fake_expect_reply("T05thread:2;");
    fake_send_raw("+", 1);
    fake_send_packet("k", 1);
    fake_expect_ack_reply("X09");
    play(GDB_STOP_SW_BREAK, 1, GDB_END_KILL);
    assert_int_equal(fake_resume_calls, 2);
    fake_link_reset();
    fake_exchange("?", "T05thread:2;");
    play(GDB_STOP_SW_BREAK, 1, GDB_END_LINK_LOST);
    assert_int_equal(fake_poweroff_calls, 0);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_continue_and_step, test_continue_at_an_address, test_malformed_resume_packets, test_vcont,
               test_vcont_refusals, test_detach, test_kill_detaches, test_kill_owes_no_stop_reply)
