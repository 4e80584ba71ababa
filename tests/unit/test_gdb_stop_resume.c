/* tests/unit/test_gdb_stop_resume.c: stopping and resuming the four fake CPUs under gdbstub/stop.c, with this
 * test playing gdb (the machine: gdb_stop_fixture.h) -- attaching stops all four and `c` runs them; Ctrl-C and
 * detach; gdb=wait stops before the first instruction; every vCont form gdb sends and the legacy c/s, the refused
 * forms answered E.. with nothing resumed; one CPU continued alone with the others held; a step on one CPU
 * while the others stay parked (exactly one instruction, nobody else moves), repeated and moved between CPUs. */
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
#include "unit_main.h"

/* ---- the cases --------------------------------------------------------------------------------------------- */

static void test_attach_stops_every_cpu_continue_runs_them_ctrl_c_and_detach(void **state)
{
    (void)state;
    attach();
    expect_all_stopped();
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    assert_int_equal(interrupt(), 1);
    expect_all_stopped();
    snapshot(before);
    gdb_exchange("D", "OK");
    wait_running(0xf, before);
    assert_true(atomic_load(&transport_irq_on));
}

static void test_gdb_wait_stops_before_the_first_instruction(void **state)
{
    (void)state;
    machine_stop();
    machine_start(false, true);
    gdb_exchange("?", "T05thread:1;");
    assert_int_equal(executed(0), 0);
    assert_int_equal(read_reg(0, REGNUM_RIP), TRAP_PC + 1);
    expect_all_stopped();
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
}

static void test_every_vcont_form_and_the_legacy_ones(void **state)
{
    (void)state;
    attach();
    gdb_exchange("vCont?", "vCont;c;C;s;S");
    expect_continue("vCont;c");
    expect_continue("vCont;c:-1");
    expect_continue("vCont;C05");
    expect_continue("vCont;c:1;c:2;c:3;c:4"); /* every CPU by name is all of them */
    expect_continue("c");
    expect_continue("C05");
    expect_step("vCont;s:2", 1, true);
    expect_step("vCont;S05:4", 3, true);
    expect_step("vCont;s:3;c", 2, false);
    expect_step("vCont;s:1;c:2;c:3;c:4", 0, false);
    gdb_exchange("Hg4", "OK");
    expect_step("vCont;s:0;c", 3, false); /* thread 0: gdb's current one */
    /* A plain s steps gdb's current CPU (Hg) while the others run, or the CPU Hc names, alone. */
    gdb_exchange("Hg2", "OK");
    gdb_exchange("Hc-1", "OK");
    expect_step("s", 1, false);
    gdb_exchange("Hc3", "OK");
    expect_step("s", 2, true);
    gdb_exchange("Hc-1", "OK");
    expect_continue("c");
}

/* gdb's `set scheduler-locking on`: vCont;c:N runs CPU N alone while the others stay where they are -- the
 * leader among them, held -- and the transport's interrupt goes to the one that runs, so that Ctrl-C stops
 * it; a plain continue lets everyone go again. */
static void test_continue_one_cpu_alone_with_the_others_held(void **state)
{
    (void)state;
    attach();
    static const unsigned order[] = { 0, 2, 3, 1, 1, 0 };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        unsigned cpu = order[i];
        unsigned long before[FAKE_CPUS];
        snapshot(before);
        char packet[32];
        snprintf(packet, sizeof packet, "vCont;c:%x", cpu + 1);
        gdb_send(packet);
        wait_running(1u << cpu, before);
        usleep(2000);
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            if (n != cpu && executed(n) != before[n])
                fail_msg("%s: cpu %u ran", packet, n);
        assert_true(atomic_load(&transport_irq_on));
        assert_int_equal(atomic_load(&transport_irq_cpu), (int)cpu);
        assert_int_equal(interrupt(), cpu + 1);
        expect_all_stopped();
    }
    expect_continue("vCont;c");
    assert_int_equal(atomic_load(&transport_irq_cpu), -1);
}

static void test_refused_vcont_forms_resume_nothing(void **state)
{
    (void)state;
    attach();
    refuse_vconts(gdb_exchange);
    gdb_exchange("cz", "E22");
    gdb_exchange("S", "E22");
    expect_all_stopped();
    expect_continue("vCont;c");
}

static void test_step_one_cpu_repeatedly_and_from_cpu_to_cpu(void **state)
{
    (void)state;
    attach();
    /* The leader parks itself while another CPU steps; each step's trap makes the stepped CPU the leader. */
    for (unsigned i = 0; i < 12; i++) {
        unsigned cpu = (i * 3 + 1) % FAKE_CPUS;
        char packet[32];
        snprintf(packet, sizeof packet, "vCont;s:%x", cpu + 1);
        expect_step(packet, cpu, true);
    }
    for (unsigned i = 0; i < 5; i++)
        expect_step("vCont;s:3", 2, true);
    expect_continue("vCont;c");
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_attach_stops_every_cpu_continue_runs_them_ctrl_c_and_detach,
               test_gdb_wait_stops_before_the_first_instruction, test_every_vcont_form_and_the_legacy_ones,
               test_continue_one_cpu_alone_with_the_others_held, test_refused_vcont_forms_resume_nothing,
               test_step_one_cpu_repeatedly_and_from_cpu_to_cpu)
