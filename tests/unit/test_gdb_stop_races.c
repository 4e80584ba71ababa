/* tests/unit/test_gdb_stop_races.c: gdbstub/stop.c where events meet, on the four fake CPUs of
 * gdb_stop_fixture.h -- a breakpoint hit on two CPUs at once (both stop, one leads, the other's hit is reported
 * after the first resume) and, round after round, no CPU left unstopped; a Ctrl-C overtaken by a breakpoint,
 * and a breakpoint hit overtaken before it enters the debugger; a hardware breakpoint stepped over; a stop
 * request landing as a CPU leaves the debugger, which parks it again on top of the park it is leaving (and both
 * unwind); the mailbox running on the parked CPU
 * itself, and a breakpoint the debugger's own work runs into suspended until the machine resumes; a panic under
 * gdb=panic (in a child process: a panicked machine never runs again). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "arch/x86_64/gdb_regs.h"
#include "fake_hal.h"
#include "fake_target.h"
#include "gdb_stop_fixture.h"
#include "gdbstub/breakpoints.h"
#include "gdbstub/packet.h"
#include "gdbstub/stop.h"
#include "gdbstub/stub.h"
#include "hal/debug.h"

static void test_breakpoint_hit_on_two_cpus_at_once(void **state)
{
    (void)state;
    attach();
    /* Both breakpoints a little ahead of where CPUs 1 and 2 are; each CPU waits at its own for the other, so
     * that the two int3s run together. */
    uint64_t at[FAKE_CPUS] = { 0 };
    for (unsigned cpu = 1; cpu <= 2; cpu++) {
        at[cpu] = next_pc(&fcpu[cpu], next_pc(&fcpu[cpu], read_reg(cpu, REGNUM_RIP)));
        char packet[48];
        snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)at[cpu]);
        gdb_exchange(packet, "OK");
        fcpu[cpu].rendezvous_addr = at[cpu];
    }
    char memory[8];
    snprintf(memory, sizeof memory, "%02x", NOP);
    char packet[48];
    snprintf(packet, sizeof packet, "m%llx,1", (unsigned long long)at[1]);
    gdb_exchange(packet, memory); /* gdb sees the code, not the int3 */
    gdb_send("c");

    unsigned first = gdb_stop_reply("05", "swbreak:;") - 1;
    assert_true(first == 1 || first == 2);
    unsigned second = 3 - first;
    assert_int_equal(read_reg(first, REGNUM_RIP), at[first]);
    expect_all_stopped();
    /* gdb steps the first CPU off its breakpoint (removed), and resumes: the second CPU's hit comes next. */
    snprintf(packet, sizeof packet, "z0,%llx,1", (unsigned long long)at[first]);
    gdb_exchange(packet, "OK");
    gdb_send("c");
    unsigned next = gdb_stop_reply("05", "swbreak:;") - 1;
    if (next != second)
        fail_msg("after cpu %u's breakpoint, the next stop is cpu %u's, not cpu %u's", first, next, second);
    assert_int_equal(read_reg(second, REGNUM_RIP), at[second]);
    /* The second CPU ran into its int3 during the first session, was held there, and ran into it again
     * once released: its first hit was not lost, and not reported twice. */
    assert_int_equal(atomic_load(&fcpu[second].int3s), 2);
    assert_int_equal(atomic_load(&fcpu[first].int3s), 1);
    expect_all_stopped();
    gdb_exchange("D", "OK");
    assert_int_equal(fake_sw_break_count(), 0);
}

/* Two CPUs hit breakpoints together, again and again: the loser parks while the winner's session starts, and
 * may read `closing` still set by the session before -- it must not then leave unseen while the winner,
 * having seen it parked, sends it no stop request (the winner's session went on without it, "not stopped",
 * and the integration test test_breakpoint_every_cpu_hits_at_once failed about one run in eight). Every
 * session must find all four CPUs stopped. The window is two instructions of the loser with no hook of the
 * fixture between them: on host threads it was never hit (60,000 rounds against stop.c before the claim), so
 * this guards the property over many simultaneous hits and the claim's ordinary paths, not that window. */
#define AT_ONCE_ROUNDS 400

static void test_breakpoints_hit_together_again_and_again_stop_every_cpu(void **state)
{
    (void)state;
    attach();
    for (int round = 0; round < AT_ONCE_ROUNDS; round++) {
        uint64_t at[FAKE_CPUS] = { 0 };
        char packet[48];
        for (unsigned cpu = 1; cpu <= 2; cpu++) {
            at[cpu] = next_pc(&fcpu[cpu], next_pc(&fcpu[cpu], read_reg(cpu, REGNUM_RIP)));
            snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)at[cpu]);
            gdb_exchange(packet, "OK");
            fcpu[cpu].rendezvous_addr = at[cpu];
        }
        gdb_send("c");
        unsigned first = gdb_stop_reply("05", "swbreak:;") - 1;
        assert_true(first == 1 || first == 2);
        for (unsigned n = 0; n < FAKE_CPUS; n++) {
            char want[32];
            snprintf(want, sizeof want, "cpu %u, stopped", n);
            if (strcmp(thread_info(n), want) != 0)
                fail_msg("round %d: cpu %u's breakpoint stopped the machine, but cpu %u is '%s'", round, first,
                         n, thread_info(n));
        }
        /* Both removed: the loser, parked at its own (rewound), just runs it once released. */
        for (unsigned cpu = 1; cpu <= 2; cpu++) {
            snprintf(packet, sizeof packet, "z0,%llx,1", (unsigned long long)at[cpu]);
            gdb_exchange(packet, "OK");
        }
    }
    gdb_exchange("D", "OK");
    assert_int_equal(fake_sw_break_count(), 0);
}

/* gdb's Ctrl-C reaches one CPU's interrupt just as another CPU hits a breakpoint: the breakpoint's stop NMIs
 * the first CPU between the interrupt's stop request and its gdb_after_irq. That stop answers the request
 * (gdb hears of the breakpoint, on the transport the request came from); once gdb resumes, the first CPU's
 * gdb_after_irq finds nothing to do -- no second stop, whose reply nobody waits for, with the machine held. */
static void test_a_stop_request_overtaken_by_a_breakpoint_is_answered_by_it(void **state)
{
    (void)state;
    attach();
    uint64_t at = next_pc(&fcpu[2], next_pc(&fcpu[2], read_reg(2, REGNUM_RIP)));
    char packet[48];
    snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)at);
    gdb_exchange(packet, "OK");
    fcpu[2].rendezvous_addr = at; /* cpu 2 waits at its breakpoint for the test's go */
    atomic_store(&fcpu[1].irq_held, true);
    gdb_send("c");
    atomic_store(&fcpu[1].irq, 2);
    for (int i = 0; i < 20000 && !atomic_load(&fcpu[1].irq_requested); i++)
        usleep(100);
    assert_true(atomic_load(&fcpu[1].irq_requested));
    pthread_barrier_wait(&rendezvous); /* cpu 2 runs into its int3 */
    assert_int_equal(gdb_stop_reply("05", "swbreak:;"), 3);
    expect_all_stopped();
    atomic_store(&fcpu[1].irq_held, false); /* parked: it goes on to gdb_after_irq once resumed */
    packet[0] = 'z';
    gdb_exchange(packet, "OK");
    expect_continue_runs_on(); /* no stop came of the request */
    assert_int_equal(interrupt(), 1);
    gdb_exchange("D", "OK");
}

/* A CPU runs into a breakpoint; the stub has decided it is gdb's, and before it enters the debugger another
 * CPU's stop parks it. gdb removes both breakpoints and resumes: the first CPU's hit is stale (its
 * instruction is back and just runs), so nothing stops the machine -- it used to, with a stop reply for a
 * breakpoint gdb had deleted, nobody waiting for it and the machine held (the breakpoint sweep's console going
 * quiet, 1 cycle in about 500 under TCG). CPU 3 takes the detour out of NMI context, CPU 2 parks inside it. */
static void test_a_breakpoint_hit_overtaken_before_it_enters_is_not_reported_once_removed(void **state)
{
    (void)state;
    for (unsigned late = 2; late <= 3; late++) {
        attach();
        uint64_t hit = next_pc(&fcpu[1], next_pc(&fcpu[1], read_reg(1, REGNUM_RIP)));
        uint64_t overtaken = next_pc(&fcpu[late], next_pc(&fcpu[late], read_reg(late, REGNUM_RIP)));
        char hit_packet[48], overtaken_packet[48];
        snprintf(hit_packet, sizeof hit_packet, "Z0,%llx,1", (unsigned long long)hit);
        snprintf(overtaken_packet, sizeof overtaken_packet, "Z0,%llx,1", (unsigned long long)overtaken);
        gdb_exchange(hit_packet, "OK");
        gdb_exchange(overtaken_packet, "OK");
        fcpu[1].rendezvous_addr = hit; /* cpu 1 waits at its breakpoint for the test's go */
        atomic_store(&fcpu[late].nmi_at_rewind, true);
        gdb_send("c");
        for (int i = 0; i < 20000 && !atomic_load(&fcpu[late].at_rewind); i++)
            usleep(100);
        assert_true(atomic_load(&fcpu[late].at_rewind));
        pthread_barrier_wait(&rendezvous); /* cpu 1 runs into its int3 */
        assert_int_equal(gdb_stop_reply("05", "swbreak:;"), 2);
        expect_all_stopped();
        hit_packet[0] = overtaken_packet[0] = 'z';
        gdb_exchange(hit_packet, "OK");
        gdb_exchange(overtaken_packet, "OK");
        expect_continue_runs_on(); /* the stale hit stopped nothing */
        assert_int_equal(atomic_load(&fcpu[late].int3s), 1);
        interrupt();
        gdb_exchange("D", "OK");
    }
}

static void test_hardware_breakpoint_hit_then_stepped_over(void **state)
{
    (void)state;
    attach();
    uint64_t at = next_pc(&fcpu[3], next_pc(&fcpu[3], next_pc(&fcpu[3], read_reg(3, REGNUM_RIP))));
    char packet[48];
    snprintf(packet, sizeof packet, "Z1,%llx,1", (unsigned long long)at);
    gdb_exchange(packet, "OK");
    gdb_send("c");
    assert_int_equal(gdb_stop_reply("05", "hwbreak:;"), 4);
    assert_int_equal(read_reg(3, REGNUM_RIP), at);
    /* The step passes over the breakpoint it stands on (the resume flag) and stops after it. */
    expect_step("vCont;s:4", 3, true);
    snprintf(packet, sizeof packet, "z1,%llx,1", (unsigned long long)at);
    gdb_exchange(packet, "OK");
    expect_continue("c");
}

static void test_a_stop_request_as_a_cpu_leaves_parks_it_again_where_it_was(void **state)
{
    (void)state;
    attach();
    /* CPU 1 (it takes the detour) is released and, just before its park returns -- still inside the
     * debugger -- the next session's stop request reaches it. It parks again with the context it stopped
     * with, not one inside the debugger (where a step would never be reported: stepi hung), so gdb sees
     * it in its own code and a step of it completes. */
    atomic_store(&fcpu[1].nested_window, true);
    atomic_store(&fcpu[1].nmi_at_park_end, true);
    gdb_send("c");
    usleep(2000);
    assert_int_equal(interrupt(), 1);
    expect_all_stopped();
    assert_int_equal(atomic_load(&fcpu[1].nested_parks), 0);
    uint64_t rip = read_reg(1, REGNUM_RIP);
    if (rip < WINDOW(1) || rip >= WINDOW(1) + WINDOW_SIZE)
        fail_msg("cpu 1 parked at 0x%llx, outside its own code", (unsigned long long)rip);
    expect_step("vCont;s:2", 1, true);
    expect_step("vCont;s:2;c", 1, false);
    atomic_store(&fcpu[1].nested_window, false);
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    assert_int_equal(interrupt(), 1);
    gdb_exchange("D", "OK");
    wait_running(0xf, before);
}

static void expect_monitor(const char *command, const char *output)
{
    char packet[128] = "qRcmd,";
    hex_encode(packet + 6, command, strlen(command));
    packet[6 + 2 * strlen(command)] = '\0';
    gdb_send(packet);
    const char *got = gdb_receive();
    char want[256] = "O";
    hex_encode(want + 1, output, strlen(output));
    want[1 + 2 * strlen(output)] = '\0';
    if (strcmp(got, want) != 0)
        fail_msg("monitor %s: got %s", command, got);
    assert_string_equal(gdb_receive(), "OK");
}

static void test_mailbox_runs_on_the_parked_cpu_and_own_breakpoints_step_aside(void **state)
{
    (void)state;
    attach();
    expect_monitor("rdmsr cpu 2 0x10", "cpu 2 msr 0x10 = 0x00000000000003ea\n");
    expect_monitor("rdmsr cpu 0 0x10", "cpu 0 msr 0x10 = 0x00000000000003e8\n");
    expect_monitor("rdmsr cpu 3 0x38f", "cpu 3 msr 0x38f = 0x000000070000000f\n");
    expect_monitor("rdmsr cpu 1 0xdead", "error: cpu 1 msr 0xdead: rdmsr faulted\n");
    /* CPU 3's mailbox work runs into a breakpoint gdb set: it is taken, not stopped at, and its byte is
     * back until the machine resumes. */
    suspend_addr = FAKE_HIGH_BASE + 0x200;
    char packet[48];
    snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)suspend_addr);
    gdb_exchange(packet, "OK");
    assert_int_equal(fake_memory_byte(suspend_addr), INT3);
    expect_monitor("rdmsr cpu 3 0x777", "cpu 3 msr 0x777 = 0x0000000000000003\n");
    assert_true(job.trap_taken);
    assert_int_equal(fake_memory_byte(suspend_addr), fake_memory_pattern(0x200));
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    assert_int_equal(fake_memory_byte(suspend_addr), INT3); /* planted again as the machine resumed */
    assert_int_equal(interrupt(), 1);
    gdb_exchange("D", "OK");
    assert_int_equal(fake_memory_byte(suspend_addr), fake_memory_pattern(0x200));
}

/* In a child: a panicked machine never runs again, so its CPU threads cannot be joined. */
static void panic_scenario(void)
{
    setenv("CMOCKA_TEST_ABORT", "1", 1); /* a failed check aborts the child, which the parent sees */
    machine_start(true, false);
    attach();
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    atomic_store(&fcpu[2].panic_now, true);
    assert_int_equal(gdb_stop_reply("06", ""), 3); /* gdb waits after its `c`: the panic is the stop */
    gdb_exchange("?", "T06thread:3;");
    expect_all_stopped();
    assert_int_equal(read_reg(2, REGNUM_RAX), 0xdead);
    /* Each resume ends in a new stop, at the same place; nobody runs. */
    for (int i = 0; i < 3; i++) {
        snapshot(before);
        gdb_send(i == 0 ? "c" : "vCont;s:1");
        assert_int_equal(gdb_stop_reply("06", ""), 3);
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            assert_int_equal(executed(n), before[n]);
    }
    expect_all_stopped();
    _exit(0);
}

static void test_panic_enters_the_debugger_and_nothing_runs_again(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        panic_scenario();
    int status = 0;
    pid_t done = 0;
    for (int waited = 0; waited < 60000 && done == 0; waited += 10) {
        done = waitpid(child, &status, WNOHANG);
        if (done == 0)
            usleep(10000);
    }
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        fail_msg("the panic scenario did not finish");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the panic scenario failed (status 0x%x)", status);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_breakpoint_hit_on_two_cpus_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_breakpoints_hit_together_again_and_again_stop_every_cpu, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_stop_request_overtaken_by_a_breakpoint_is_answered_by_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_breakpoint_hit_overtaken_before_it_enters_is_not_reported_once_removed,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_hardware_breakpoint_hit_then_stepped_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_stop_request_as_a_cpu_leaves_parks_it_again_where_it_was, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_mailbox_runs_on_the_parked_cpu_and_own_breakpoints_step_aside, setup,
                                        teardown),
        cmocka_unit_test(test_panic_enters_the_debugger_and_nothing_runs_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
