/* tests/unit/test_nmi_owner.c: whose an NMI is (arch/x86_64/nmi_owner.c), every branch and every coincidence --
 * first against scripted sources (which are asked, in which order, what port 0x61 says), then end to end on
 * every PMU model of the fake CPU, with the real counter claim (profiler_nmi over arch/x86_64/pmu.c) as the
 * counter source: a genuine NMI while an overflow's PMI is still on its way is genuine where the machine masks
 * the LVT entry on delivery; a debugger stop merged with an overflow stops and the counter keeps running; an
 * external NMI merged with an overflow is read from port 0x61 at the next tick, never in the counter's NMI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/nmi_owner.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "hal/pmu.h"
#include "kernel/profiler.h"
#include "profiler_counter_fixture.h"

/* ---- scripted sources ----------------------------------------------------------------------------------- */

static struct {
    bool panicking, counter, selftest, debugger;
    uint8_t port61;
    char asked[16]; /* one letter per source asked, in order: P c s d 6 */
} script;

static void asked(char c)
{
    size_t n = strlen(script.asked);
    assert_true(n + 1 < sizeof script.asked);
    script.asked[n] = c;
}
static bool panicking(void) { asked('P'); return script.panicking; }
static bool counter(void *arg) { (void)arg; asked('c'); return script.counter; }
static bool selftest(void *arg) { (void)arg; asked('s'); return script.selftest; }
static bool debugger(void *arg) { (void)arg; asked('d'); return script.debugger; }
static uint8_t port61(void) { asked('6'); return script.port61; }

/* Set by nmi_owner() when the boot CPU claims an NMI: port 0x61 owed a read at the tick. */
static atomic_bool scripted_owed;

static enum nmi_owner decide_with(bool boot_cpu, uint8_t *port, struct nmi_history *h, uint64_t at, uint64_t now)
{
    memset(script.asked, 0, sizeof script.asked);
    atomic_store(&scripted_owed, false);
    const struct nmi_sources src = { .panicking = panicking, .counter = counter, .selftest = selftest,
                                     .debugger = debugger, .port61 = port61, .boot_cpu = boot_cpu,
                                     .port61_owed = &scripted_owed, .at = at, .now = now, .late_window = 100,
                                     .history = h };
    return nmi_owner(&src, port);
}

static enum nmi_owner decide(bool boot_cpu, uint8_t *port)
{
    return decide_with(boot_cpu, port, NULL, 0, 0);
}

/* One NMI on a CPU with history h, interrupting instruction at, entered at now and returning to the same
 * instruction at now + 10; which sources claim it is the script's. */
static enum nmi_owner nmi_at(struct nmi_history *h, bool c, bool s, bool d, uint64_t at, uint64_t now)
{
    script.panicking = false;
    script.counter = c;
    script.selftest = s;
    script.debugger = d;
    script.port61 = 0;
    uint8_t port;
    enum nmi_owner owner = decide_with(false, &port, h, at, now);
    nmi_returning(h, at, now + 10);
    return owner;
}

/* The owed-NMI rule (nmi_owner.h): a claim beyond one per NMI owes one NMI, taken when it comes back to back or
 * within the window, once; anything else unclaimed is genuine. */
static void an_owed_nmi_is_kprofs_once_and_only_when_it_comes_in_time(void **state)
{
    (void)state;
    struct nmi_history h = { 0 };
    /* no claim of several: an unclaimed NMI back to back is genuine */
    assert_int_equal(nmi_at(&h, true, false, false, 5, 1000), NMI_KPROF);
    assert_int_equal(nmi_at(&h, false, false, false, 5, 1011), NMI_GENUINE);
    /* counter and debugger together: the debugger's own NMI, back to back, is kprof's ... */
    assert_int_equal(nmi_at(&h, true, false, true, 7, 2000), NMI_KPROF);
    assert_int_equal(h.owed, 1u);
    assert_int_equal(nmi_at(&h, false, false, false, 7, 5000), NMI_KPROF); /* late by the clock, but back to back */
    assert_int_equal(h.late, 1u);
    /* ... once: the next unclaimed one is genuine */
    assert_int_equal(nmi_at(&h, false, false, false, 7, 5011), NMI_GENUINE);
    /* within the window at another instruction (a send a few instructions after the return) */
    assert_int_equal(nmi_at(&h, true, true, false, 9, 6000), NMI_KPROF);
    assert_int_equal(nmi_at(&h, false, false, false, 12, 6010 + 100), NMI_KPROF);
    assert_int_equal(h.late, 2u);
    /* outside the window at another instruction: genuine, and the debt is gone (it merged, or is lost) */
    assert_int_equal(nmi_at(&h, true, true, true, 20, 7000), NMI_KPROF);
    assert_int_equal(h.owed, 2u);
    assert_int_equal(nmi_at(&h, false, false, false, 21, 7010 + 101), NMI_GENUINE);
    assert_int_equal(h.owed, 0u);
    assert_int_equal(nmi_at(&h, false, false, false, 21, 7121 + 10), NMI_GENUINE);
    /* a claimed NMI pays nothing: two owed, a claimed one between, both still taken */
    assert_int_equal(nmi_at(&h, true, true, true, 30, 8000), NMI_KPROF);
    assert_int_equal(nmi_at(&h, true, false, false, 30, 8010), NMI_KPROF);
    assert_int_equal(nmi_at(&h, false, false, false, 30, 8020), NMI_KPROF);
    assert_int_equal(nmi_at(&h, false, false, false, 30, 8030), NMI_KPROF);
    assert_int_equal(nmi_at(&h, false, false, false, 30, 8040), NMI_GENUINE);
    assert_int_equal(h.late, 4u);
    /* a panic asks nothing and changes nothing */
    h.owed = 1;
    script.panicking = true;
    uint8_t port;
    assert_int_equal(decide_with(false, &port, &h, 30, 8050), NMI_PANICKING);
    assert_int_equal(h.owed, 1u);
    /* on the boot CPU an owed NMI leaves port 0x61 to the tick, as a claimed one does */
    script.panicking = false;
    script.port61 = 0x80;
    assert_int_equal(decide_with(true, &port, &h, 30, 8050), NMI_KPROF_CHECK_LATER);
    assert_string_equal(script.asked, "Pcsd");
}

static void every_branch_of_the_decision(void **state)
{
    (void)state;
    struct {
        bool panicking, counter, selftest, debugger, boot_cpu;
        uint8_t port61;
        enum nmi_owner owner;
        const char *asked;
        uint8_t port_seen;
    } cases[] = {
        /* a panic: nothing else is asked, not even the debugger */
        { true, true, true, true, true, 0x80, NMI_PANICKING, "P", 0 },
        /* one source each, off and on the boot CPU: the port is never read behind a claim */
        { false, true, false, false, false, 0, NMI_KPROF, "Pcsd", 0 },
        { false, true, false, false, true, 0, NMI_KPROF_CHECK_LATER, "Pcsd", 0 },
        { false, false, true, false, false, 0, NMI_KPROF, "Pcsd", 0 },
        { false, false, false, true, false, 0, NMI_KPROF, "Pcsd", 0 },
        { false, false, false, true, true, 0, NMI_KPROF_CHECK_LATER, "Pcsd", 0 },
        /* unclaimed: genuine; the boot CPU reads the port once, and an error there makes it external */
        { false, false, false, false, false, 0xC0, NMI_GENUINE, "Pcsd", 0 },
        { false, false, false, false, true, 0x00, NMI_GENUINE, "Pcsd6", 0 },
        { false, false, false, false, true, 0x3F, NMI_GENUINE, "Pcsd6", 0x3F },
        { false, false, false, false, true, 0x80, NMI_EXTERNAL, "Pcsd6", 0x80 },
        { false, false, false, false, true, 0x40, NMI_EXTERNAL, "Pcsd6", 0x40 },
        /* coincidences: the counter is asked before the debugger, and both are asked */
        { false, true, false, true, false, 0, NMI_KPROF, "Pcsd", 0 },
        { false, true, true, true, true, 0x80, NMI_KPROF_CHECK_LATER, "Pcsd", 0 },
        /* an external NMI merged with a claimed one: left to the next tick */
        { false, true, false, false, true, 0x40, NMI_KPROF_CHECK_LATER, "Pcsd", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        print_message("case %zu\n", i);
        script.panicking = cases[i].panicking;
        script.counter = cases[i].counter;
        script.selftest = cases[i].selftest;
        script.debugger = cases[i].debugger;
        script.port61 = cases[i].port61;
        uint8_t port = 0xEE;
        assert_int_equal(decide(cases[i].boot_cpu, &port), cases[i].owner);
        assert_string_equal(script.asked, cases[i].asked);
        assert_int_equal(port, cases[i].port_seen);
        /* the tick owes port 0x61 a read exactly when the boot CPU claimed */
        assert_int_equal(atomic_load(&scripted_owed), cases[i].owner == NMI_KPROF_CHECK_LATER);
    }
}

static void port61_names_what_it_reports(void **state)
{
    (void)state;
    assert_null(nmi_port61_error(0));
    assert_null(nmi_port61_error(0x3F)); /* gate, speaker, refresh and timer bits: no error */
    assert_string_equal(nmi_port61_error(0x80), "memory parity/system error");
    assert_string_equal(nmi_port61_error(0x40), "I/O channel check");
    assert_string_equal(nmi_port61_error(0xC0), "memory parity/system error");
}

static void the_tick_reads_port61_once_per_owed_mark_and_never_without_one(void **state)
{
    (void)state;
    atomic_bool owed = false;
    uint8_t port = 0xEE;
    memset(script.asked, 0, sizeof script.asked);
    script.port61 = 0x80;
    /* nothing owed: no read, whatever the port holds */
    assert_null(nmi_port61_owed_check(&owed, port61, &port));
    assert_int_equal(port, 0);
    assert_string_equal(script.asked, "");
    /* owed: one read, which names the error, and the mark is taken */
    atomic_store(&owed, true);
    assert_string_equal(nmi_port61_owed_check(&owed, port61, &port), "memory parity/system error");
    assert_int_equal(port, 0x80);
    assert_string_equal(script.asked, "6");
    assert_false(atomic_load(&owed));
    assert_null(nmi_port61_owed_check(&owed, port61, &port));
    assert_string_equal(script.asked, "6");
    /* owed with a clean port: read, no error */
    script.port61 = 0x3F;
    atomic_store(&owed, true);
    assert_null(nmi_port61_owed_check(&owed, port61, &port));
    assert_int_equal(port, 0x3F);
    assert_string_equal(script.asked, "66");
}

/* ---- end to end on the fake CPU ----------------------------------------------------------------------- */

/* The kernel's NMI path as interrupts.c runs it, with the real counter claim; the debugger's stop request and
 * port 0x61 are this test's. What each NMI was decided to be is kept. */
static bool stop_request, stopped;
static unsigned stops;
static uint8_t port61_now;
static unsigned port61_reads;
static enum nmi_owner last_owner;
static unsigned genuine;

static struct nmi_history histories[FAKE_CPUS];
static atomic_bool port61_owed[FAKE_CPUS];
/* Coincidences a scenario arms, each acted out once inside the next NMI that reaches the point: another CPU's
 * debugger stop (its request, then its NMI) while the counter's NMI runs; the held PMI reaching the local APIC
 * while the debugger's stop NMI runs. */
static bool stop_inside_counter_nmi, pmi_inside_stop_nmi;
/* The self-test as interrupts.c runs it: the mark, then the NMI; the first NMI sends a second. */
enum { SELFTEST_IDLE, SELFTEST_FIRST, SELFTEST_SECOND, SELFTEST_DONE };
static unsigned selftest_stage;

static bool no_panic(void) { return false; }
static bool real_counter(void *arg)
{
    (void)arg;
    struct context ctx = busy_ctx();
    bool mine = profiler_nmi(&ctx, fake_cycles);
    nmis_claimed += mine;
    if (mine && stop_inside_counter_nmi) {
        stop_inside_counter_nmi = false;
        stop_request = true;
        fake_inject_nmi(); /* latched: this CPU is handling an NMI */
    }
    return mine;
}
static bool scripted_selftest(void *arg)
{
    (void)arg;
    if (selftest_stage == SELFTEST_FIRST) {
        selftest_stage = SELFTEST_SECOND;
        fake_inject_nmi(); /* to itself: latched */
        return true;
    }
    if (selftest_stage == SELFTEST_SECOND) {
        selftest_stage = SELFTEST_DONE;
        return true;
    }
    return false;
}
static bool stop_debugger(void *arg)
{
    (void)arg;
    if (!stop_request)
        return false;
    stop_request = false;
    stops++;
    if (pmi_inside_stop_nmi) {
        pmi_inside_stop_nmi = false;
        fake_release_pmis(); /* its NMI latched behind this one */
    }
    return true;
}
static uint8_t read_port61(void)
{
    port61_reads++;
    return port61_now;
}

static bool kernel_nmi(void)
{
    struct nmi_history *h = &histories[fake_cpu_index];
    const struct nmi_sources src = {
        .panicking = no_panic, .counter = real_counter, .selftest = scripted_selftest, .debugger = stop_debugger,
        .port61 = read_port61, .boot_cpu = fake_cpu_index == 0, .port61_owed = &port61_owed[fake_cpu_index],
        .at = fake_nmi_at(), .now = fake_cycles, .late_window = fake_cycles_per_ms / 20, .history = h,
    };
    uint8_t port;
    last_owner = nmi_owner(&src, &port);
    nmi_returning(h, fake_nmi_at(), fake_cycles);
    genuine += last_owner == NMI_GENUINE || last_owner == NMI_EXTERNAL;
    /* the fake counts an NMI as "mine" when it was handled and returned from */
    return last_owner == NMI_KPROF || last_owner == NMI_KPROF_CHECK_LATER;
}

/* The kernel's NMI path over the booted machine, nothing asked or read yet. */
static void wire_e2e(void)
{
    fake.nmi_handler = kernel_nmi;
    stop_request = stopped = stop_inside_counter_nmi = pmi_inside_stop_nmi = false;
    stops = port61_reads = genuine = 0;
    port61_now = 0;
    selftest_stage = SELFTEST_IDLE;
    memset(histories, 0, sizeof histories);
    for (unsigned i = 0; i < FAKE_CPUS; i++)
        atomic_store(&port61_owed[i], false);
}

static bool masks_on_delivery(void) { return fake.lvt_automask; }

/* The scenario on every model whose counter counts: booted, wired, a run started, and after it the run stopped
 * and the profiler released. */
static void on_every_counting_model(void (*scenario)(void))
{
    for (unsigned next = 0; boot_next_counting_model(&next);) {
        wire_e2e();
        start_run();
        scenario();
        stop_run();
        profiler_release();
    }
}

/* CPU cpu ticked into the run and two of its counter's periods sampled: where a scenario on one CPU begins. */
static void counting_on(unsigned cpu)
{
    tick(cpu);
    run_periods(cpu, 2);
}

/* The counter on cpu overflows once more, its PMI held: not at the CPU yet. */
static void overflow_with_pmi_held(unsigned cpu)
{
    fake.hold_pmis = true;
    run_periods(cpu, 1);
    assert_true(fake.cpu[cpu].pmi_waiting);
}

/* The counter on cpu overflows once more, its NMI held: pending at the CPU, not taken yet. */
static void overflow_with_nmi_held(unsigned cpu)
{
    fake.hold_nmis = true;
    run_periods(cpu, 1);
    assert_true(fake.cpu[cpu].nmi_pending);
}

/* The cmocka test name: the scenario name_on on every counting model. */
#define ON_EVERY_COUNTING_MODEL(name)                                                                              \
    static void name(void **state)                                                                                 \
    {                                                                                                              \
        (void)state;                                                                                               \
        on_every_counting_model(name##_on);                                                                        \
    }

static void a_genuine_nmi_beside_an_overflow_on_its_way_is_genuine_on(void)
{
    counting_on(1);
    assert_int_equal(ring_count(1), 2);
    /* The counter overflows; its PMI has not reached the CPU yet when a genuine NMI comes. */
    overflow_with_pmi_held(1);
    fake_inject_nmi();
    if (masks_on_delivery()) {
        assert_int_equal(last_owner, NMI_GENUINE); /* panic with this NMI's backtrace */
        assert_int_equal(genuine, 1);
        assert_int_equal(ring_count(1), 2);
        /* The PMI arrives: the counter's, sampled, and the counter goes on. */
        fake_release_pmis();
        assert_int_equal(last_owner, NMI_KPROF);
    } else {
        /* This machine cannot tell (lscpu says so): the genuine NMI is taken for the overflow, and the
         * overflow's own NMI, finding nothing, is the one that panics -- one NMI late, never swallowed. */
        assert_int_equal(last_owner, NMI_KPROF);
        assert_int_equal(genuine, 0);
        fake_release_pmis();
        assert_int_equal(last_owner, NMI_GENUINE);
    }
    assert_int_equal(genuine, 1);
    assert_int_equal(ring_count(1), 3);
    run_periods(1, 3);
    assert_int_equal(ring_count(1), 6);
    assert_int_equal(genuine, 1);
}

ON_EVERY_COUNTING_MODEL(a_genuine_nmi_beside_an_overflow_on_its_way_is_genuine)

static void a_debugger_stop_merged_with_an_overflow_stops_and_the_counter_goes_on_on(void)
{
    counting_on(2);
    /* The overflow's NMI and the debugger's stop NMI raised together: one NMI. */
    overflow_with_nmi_held(2);
    stop_request = true;
    fake_release_nmis();
    assert_int_equal(stops, 1);
    assert_int_equal(last_owner, NMI_KPROF);
    assert_int_equal(ring_count(2), 3);
    /* Acknowledged while the CPU stopped: the next overflows still arrive. */
    run_periods(2, 4);
    assert_int_equal(ring_count(2), 7);
    assert_int_equal(genuine, 0);
    /* The stop's NMI merged with the overflow's, so nothing more is owed once time has passed: a genuine NMI
     * now still panics. */
    fake_inject_nmi();
    assert_int_equal(last_owner, NMI_GENUINE);
    assert_int_equal(genuine, 1);
}

ON_EVERY_COUNTING_MODEL(a_debugger_stop_merged_with_an_overflow_stops_and_the_counter_goes_on)

/* After a coincidence that left an NMI owed, and that NMI taken: a genuine NMI at once, and one a period later,
 * both panic (the owed NMI is taken once). */
static void then_a_genuine_nmi_still_panics(unsigned cpu)
{
    assert_int_equal(genuine, 0);
    assert_int_equal(histories[cpu].late, 1u);
    fake_inject_nmi();
    assert_int_equal(last_owner, NMI_GENUINE);
    run_periods(cpu, 1);
    fake_inject_nmi();
    assert_int_equal(last_owner, NMI_GENUINE);
    assert_int_equal(genuine, 2);
}

static void a_stop_raised_inside_a_counter_nmi_is_no_genuine_nmi_on(void)
{
    counting_on(1);
    /* Another CPU stops this one while its counter NMI runs: the request is taken in that NMI (the counter is
     * asked first, then the debugger), and the stop's own NMI, latched meanwhile, finds nothing when it comes. */
    stop_inside_counter_nmi = true;
    run_periods(1, 1);
    assert_false(stop_inside_counter_nmi);
    assert_int_equal(stops, 1);
    assert_int_equal(last_owner, NMI_KPROF);
    assert_int_equal(ring_count(1), 3);
    run_periods(1, 2);
    assert_int_equal(ring_count(1), 5);
    then_a_genuine_nmi_still_panics(1);
}

ON_EVERY_COUNTING_MODEL(a_stop_raised_inside_a_counter_nmi_is_no_genuine_nmi)

static void a_stop_nmi_between_an_overflow_and_its_pmi_is_no_genuine_nmi_on(void)
{
    counting_on(3);
    /* The counter overflows; its PMI has not reached the CPU when the debugger's stop NMI comes, and reaches it
     * while the stop is handled. */
    overflow_with_pmi_held(3);
    fake_cpu_index = 3;
    stop_request = pmi_inside_stop_nmi = true;
    fake_inject_nmi();
    assert_int_equal(stops, 1);
    assert_false(pmi_inside_stop_nmi);
    /* Where delivery masks the entry the stop NMI leaves the overflow to its PMI, which claims it; where it does
     * not, the stop NMI claimed the overflow and the PMI's NMI is the owed one. Either way: one sample, no
     * genuine NMI. */
    assert_int_equal(last_owner, NMI_KPROF);
    assert_int_equal(ring_count(3), 3);
    assert_int_equal(histories[3].late, masks_on_delivery() ? 0u : 1u);
    run_periods(3, 2);
    assert_int_equal(ring_count(3), 5);
    if (masks_on_delivery()) {
        histories[3].late = 1; /* nothing was owed: the check below is the same */
    }
    then_a_genuine_nmi_still_panics(3);
}

ON_EVERY_COUNTING_MODEL(a_stop_nmi_between_an_overflow_and_its_pmi_is_no_genuine_nmi)

static void a_selftest_nmi_sent_after_an_overflow_took_its_mark_is_no_genuine_nmi_on(void)
{
    counting_on(2);
    /* The self-test marks its first stage; the counter's NMI comes before the self-test sends its NMI, takes the
     * mark (sending the second stage's NMI, latched) -- then the self-test's own NMI comes, a few instructions
     * after the return, and finds nothing. */
    fake_cpu_index = 2;
    selftest_stage = SELFTEST_FIRST;
    fake_advance(pmu_period_cycles()); /* the overflow: its NMI and the second stage's */
    assert_int_equal(selftest_stage, SELFTEST_DONE);
    assert_int_equal(ring_count(2), 3);
    fake_inject_nmi(); /* the self-test's send, the same moment */
    assert_int_equal(last_owner, NMI_KPROF);
    fake_cycles += pmu_period_cycles();
    run_periods(2, 1);
    assert_int_equal(ring_count(2), 4);
    then_a_genuine_nmi_still_panics(2);
}

ON_EVERY_COUNTING_MODEL(a_selftest_nmi_sent_after_an_overflow_took_its_mark_is_no_genuine_nmi)

static void an_external_nmi_merged_with_an_overflow_is_left_to_the_tick_on(void)
{
    tick(0);
    /* The boot CPU's counter NMIs read no port: the claim is decided by the counter's status. */
    run_periods(0, 5);
    assert_int_equal(ring_count(0), 5);
    assert_int_equal(port61_reads, 0);
    assert_int_equal(last_owner, NMI_KPROF_CHECK_LATER);
    /* The tick reads it once for all five, and the next tick, with no NMI between, not at all. */
    uint8_t port;
    assert_null(nmi_port61_owed_check(&port61_owed[0], read_port61, &port));
    assert_null(nmi_port61_owed_check(&port61_owed[0], read_port61, &port));
    assert_int_equal(port61_reads, 1);
    /* An external NMI merged with the next overflow: claimed, and port 0x61 left for the tick, which names it. */
    port61_now = 0x80;
    overflow_with_nmi_held(0);
    fake_inject_nmi();
    fake_release_nmis();
    assert_int_equal(last_owner, NMI_KPROF_CHECK_LATER);
    assert_int_equal(port61_reads, 1);
    assert_string_equal(nmi_port61_owed_check(&port61_owed[0], read_port61, &port), "memory parity/system error");
    assert_int_equal(port, 0x80);
    assert_int_equal(port61_reads, 2);
    /* Unclaimed on the boot CPU: the port is read in the NMI, and names the error. */
    fake_inject_nmi();
    assert_int_equal(last_owner, NMI_EXTERNAL);
    assert_int_equal(port61_reads, 3);
    /* Off the boot CPU the port is never read, in the NMI or at its ticks: an unclaimed NMI there is genuine. */
    fake_cpu_index = 3;
    run_periods(3, 2);
    assert_false(atomic_load(&port61_owed[3]));
    fake_inject_nmi();
    assert_int_equal(last_owner, NMI_GENUINE);
    assert_int_equal(port61_reads, 3);
}

ON_EVERY_COUNTING_MODEL(an_external_nmi_merged_with_an_overflow_is_left_to_the_tick)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_branch_of_the_decision),
        cmocka_unit_test(port61_names_what_it_reports),
        cmocka_unit_test(the_tick_reads_port61_once_per_owed_mark_and_never_without_one),
        cmocka_unit_test(an_owed_nmi_is_kprofs_once_and_only_when_it_comes_in_time),
        cmocka_unit_test_teardown(a_genuine_nmi_beside_an_overflow_on_its_way_is_genuine, teardown),
        cmocka_unit_test_teardown(a_debugger_stop_merged_with_an_overflow_stops_and_the_counter_goes_on, teardown),
        cmocka_unit_test_teardown(an_external_nmi_merged_with_an_overflow_is_left_to_the_tick, teardown),
        cmocka_unit_test_teardown(a_stop_raised_inside_a_counter_nmi_is_no_genuine_nmi, teardown),
        cmocka_unit_test_teardown(a_stop_nmi_between_an_overflow_and_its_pmi_is_no_genuine_nmi, teardown),
        cmocka_unit_test_teardown(a_selftest_nmi_sent_after_an_overflow_took_its_mark_is_no_genuine_nmi,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, setup_group, NULL);
}
