/* tests/unit/test_cmd_profile_stream.c: `profile stream` whole (the command, kernel/shell/cmd_profile_stream.c, and
 * its task, kernel/profiler/stream_task.c) over the real profiler, with the task run here: a timed stream sends
 * every tick's sample, in datagrams that parse, with the end line three times; `profile` and a second start say
 * busy naming it meanwhile; `profile stream stop` ends it and frees the profiler; failed sends are counted unsent;
 * the network going away ends it with reason error; the destination rule as the command applies it (console,
 * unkeyed and keyed UDP, who may stop); an unkeyed stream cut to its token's expiry; bad words and an unknown pid start nothing. The network and the UDP shell
 * are tests/unit/fake_net.c; the stream's task is run when the command (or the test) sleeps, and leaves through
 * task_exit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "profiler_burn_fixture.h"
#include "shell_line.h"
#include "spawned_task.h"
#include "fake_net.h"
#include "kernel/profiler/build_id.h"
#include "kernel/shell/commands.h"
#include "kernel/heap.h"
#include "kernel/profiler.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/profiler/stream_packer.h"
#include "kernel/profiler/stream_request.h"
#include "kernel/lib/sink.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "unit_main.h"

/* The image, the tasks and the heap are profiler_burn_fixture.c's; every interrupted context has one caller,
 * the first word of its stack (the fake kernel's walk). */

/* ---- the stream's task, run here -------------------------------------------------------------------------- */

static bool net_goes_down_at_sleep; /* the network goes away at the task's next sleep */

/* Every CPU's ticks so far are the fake kernel's rounds of ticks (fake_tick_rounds); the scheduler says so. */
void sched_cpu_ticks(unsigned cpu, uint64_t *ticks, uint64_t *busy)
{
    (void)cpu;
    *ticks = *busy = (uint64_t)fake_tick_rounds;
}

/* Runs the stream's task until it exits (tests/unit/spawned_task.c). */
static void run_stream_task(void)
{
    spawned_task_run();
}

void task_sleep_until(int64_t when_ns)
{
    burn_window_sleep(when_ns);
    if (net_goes_down_at_sleep)
        fake_net_up = false;
    if (when_ns > fake_time_ns)
        fake_time_ns = when_ns;
}

/* The stop's wait (for the CPUs to let go of the run, or for the stream's task to end): the fake kernel's
 * tick on every CPU, counted in fake_sleeps, and the stream's task gets to run if it has not yet. */
static void stop_wait(uint32_t ms)
{
    (void)ms;
    if (spawned_task_pending())
        run_stream_task();
}

/* ---- running lines and reading what was sent ------------------------------------------------------------- */

static char output[8192];
/* Where the lines run come from: the console unless a test says the UDP shell (udp, from ip, keyed or not). */
static struct shell_origin origin;

static int run_line(const char *line) { return shell_line_run(cmd_profile, line, output, sizeof output, &origin); }

struct received {
    unsigned data, ends, heartbeats;
    uint64_t samples, next_first, next_seq;
    struct profile_stream_end end;
    struct profile_stream_header first_header;
};

static void count_sample(void *arg, const struct profile_raw_sample *s)
{
    (void)s;
    ((struct received *)arg)->samples++;
}

/* Every datagram sent parses, goes to ip:port from the stream's port, and follows on from the one before. */
static struct received parse_sent(uint32_t ip, uint16_t port, unsigned failed_from)
{
    struct received r;
    memset(&r, 0, sizeof r);
    for (unsigned i = 0; i < fake_net_nsent; i++) {
        const struct fake_net_datagram *d = &fake_net_sent[i];
        assert_int_equal(d->src_port, PROFILE_STREAM_SRC_PORT);
        assert_int_equal(d->dst_ip, ip);
        assert_int_equal(d->dst_port, port);
        struct profile_stream_datagram g;
        uint64_t before = r.samples;
        assert_true(profile_stream_parse_datagram(d->data, d->len, &g, count_sample, &r));
        if (g.is_end) {
            if (r.ends)
                assert_memory_equal(&g.end, &r.end, sizeof g.end);
            else
                assert_int_equal(g.end.seq, r.next_seq);
            r.end = g.end;
            r.ends++;
            continue;
        }
        if (r.data == 0)
            r.first_header = g.header;
        assert_int_equal(g.header.seq, r.next_seq);
        assert_int_equal(g.header.first, r.next_first);
        r.next_seq++;
        r.next_first += g.header.samples;
        r.data++;
        r.heartbeats += g.header.samples == 0;
        if (i >= failed_from)
            r.samples = before; /* it never left */
    }
    return r;
}

static size_t heap_used(void)
{
    struct heap_stats st;
    heap_get_stats(&st);
    return st.used_bytes;
}

static int setup(void **state)
{
    (void)state;
    burn_setup(1);
    fake_sleep_hook = stop_wait;
    burn_ticks_per_sleep = 2;
    spawned_task_forget();
    spawned_task_name = "pstream";
    net_goes_down_at_sleep = false;
    fake_net_reset();
    origin = (struct shell_origin){ 0 };
    return 0;
}

static const uint32_t HOST = 0x0a000202; /* 10.0.2.2 */

/* The run number of a stream started now: the fake boot secret's (fake_net.c); no clock goes in. */
static uint32_t run_id_now(void)
{
    return FAKE_RUN_ID;
}

/* output with %08x replaced by the run number */
static void expect_output(const char *format, uint32_t id)
{
    char want[512];
    snprintf(want, sizeof want, format, id);
    assert_string_equal(output, want);
}

static void test_a_timed_stream_sends_every_sample(void **state)
{
    (void)state;
    run_line("profile 50"); /* the rings are allocated once: not a leak of the stream */
    size_t heap_before = heap_used();
    uint32_t id = run_id_now();
    assert_int_equal(run_line("profile stream 10.0.2.2:9000 1"), 0);
    expect_output("profile stream: run %08x to 10.0.2.2:9000 for 1 s, source tick, headroom 1.0 s at 1 kHz per cpu\n", id);
    /* meanwhile: the one-shot profile and a second stream say busy, naming it; the status line has its figures */
    assert_int_equal(run_line("profile 100"), 1);
    expect_output("profile: busy: streaming run %08x to 10.0.2.2:9000 (profile stream stop ends it), 1 s left\n",
                  id);
    assert_int_equal(run_line("profile stream 10.0.2.3:9 5"), 1);
    expect_output("profile stream: busy: streaming run %08x to 10.0.2.2:9000 (profile stream stop ends it), 1 s "
                  "left\n", id);
    assert_int_equal(run_line("profile stream"), 0);
    expect_output("profile stream: run %08x to 10.0.2.2:9000, 0.0 s, 0 samples/s, sent 0, ring dropped 0, unsent 0, "
                  "0 datagrams, task 0.0%% of cpu 0\n", id);
    assert_int_equal(fake_net_binds, 1);

    unsigned ticks_from = fake_tick_rounds;
    fake_sleeps = 0; /* the stop's waits and the task's own sleeps (task_sleep_ms): a round of ticks each */
    run_stream_task();
    unsigned ticks = fake_tick_rounds - ticks_from - fake_sleeps;
    assert_true(fake_sleeps >= 1);
    struct received r = parse_sent(HOST, 9000, UINT32_MAX);
    assert_int_equal(r.ends, PROFILE_STREAM_END_COPIES);
    assert_int_equal(r.end.reason, PROFILE_STREAM_TIME);
    assert_int_equal(r.end.ring_dropped, 0);
    assert_int_equal(r.end.unsent, 0);
    /* every tick of the stream's life on both CPUs, nothing else (the ticks of its stop come after the run) */
    assert_int_equal(r.samples, (uint64_t)ticks * fake_cpu_count);
    assert_int_equal(r.end.produced, r.samples);
    assert_true(r.samples >= 2 * 20 * 2);
    assert_string_equal(r.first_header.source, "tick");
    assert_string_equal(r.first_header.build_id, "deadbeef");
    assert_int_equal(r.first_header.cpus, 2);
    assert_int_equal(r.first_header.run, id);

    assert_int_equal(run_line("profile stream"), 0);
    char want[256];
    snprintf(want, sizeof want, "profile stream: idle; last run %08x to 10.0.2.2:9000, 1.", id);
    assert_memory_equal(output, want, strlen(want));
    snprintf(want, sizeof want, ", sent %llu, ring dropped 0, unsent 0, %u datagrams, task ",
             (unsigned long long)r.samples, r.data + PROFILE_STREAM_END_COPIES);
    assert_non_null(strstr(output, want));
    assert_non_null(strstr(output, ", produced "));
    assert_non_null(strstr(output, ", ended: time\n"));
    burn_expect_profiler_free();
    assert_int_equal(heap_used(), heap_before);
    /* a second stream binds nothing more */
    assert_int_equal(run_line("profile stream 10.0.2.2:9001 1"), 0);
    run_stream_task();
    assert_int_equal(fake_net_binds, 1);
}

static void test_stop_ends_it(void **state)
{
    (void)state;
    assert_int_equal(run_line("profile stream 10.0.2.9:7000"), 0);
    assert_non_null(strstr(output, " until profile stream stop, source tick, headroom 1.0 s at 1 kHz per cpu\n"));
    for (int i = 0; i < 5; i++)
        fake_tick_every_cpu(fake_tick_rounds); /* samples waiting in the rings: the stop's last drain sends them */
    assert_int_equal(run_line("profile stream stop"), 0);
    assert_memory_equal(output, "profile stream: stopped: run ", 29);
    struct received r = parse_sent(0x0a000209, 7000, UINT32_MAX);
    assert_int_equal(r.end.reason, PROFILE_STREAM_STOPPED);
    assert_true(r.samples >= 10);
    assert_int_equal(r.end.produced, r.samples);
    char produced[64];
    snprintf(produced, sizeof produced, ", produced %llu\n", (unsigned long long)r.samples);
    assert_non_null(strstr(output, produced));
    burn_expect_profiler_free();
    assert_int_equal(run_line("profile stream stop"), 1);
    assert_string_equal(output, "profile stream: not streaming\n");
}

static void test_failed_sends_are_counted_unsent(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 40; /* several datagrams a drain */
    assert_int_equal(run_line("profile stream 10.0.2.2:9000 1"), 0);
    fake_net_fail_from = 3;
    run_stream_task();
    /* everything from the fourth datagram on failed: the end lines too, so the figures come from the status */
    assert_int_equal(run_line("profile stream"), 0);
    struct received r = parse_sent(HOST, 9000, 3);
    assert_int_equal(r.ends, PROFILE_STREAM_END_COPIES); /* sent (and refused), so recorded */
    assert_true(r.end.unsent > 0);
    assert_int_equal(r.samples + r.end.unsent + r.end.ring_dropped, r.end.produced);
    char unsent[64];
    snprintf(unsent, sizeof unsent, ", unsent %llu,", (unsigned long long)r.end.unsent);
    assert_non_null(strstr(output, unsent));
}

static void test_the_network_going_away_ends_it(void **state)
{
    (void)state;
    assert_int_equal(run_line("profile stream 10.0.2.2:9000"), 0);
    net_goes_down_at_sleep = true;
    run_stream_task();
    assert_int_equal(run_line("profile stream"), 0);
    assert_non_null(strstr(output, ", ended: error\n"));
    burn_expect_profiler_free();
    /* and a start while it is down starts nothing */
    assert_int_equal(run_line("profile stream 10.0.2.2:9000"), 1);
    assert_string_equal(output, "profile stream: no network interface\n");
    assert_false(spawned_task_pending());
}

static void test_where_it_may_go_as_the_command_applies_it(void **state)
{
    (void)state;
    /* the console: HOST is required; the allowlist holds */
    assert_int_equal(run_line("profile stream 9000"), 1);
    assert_string_equal(output, "profile stream: PORT alone means \"to the address this request came from\": on the "
                                "console give HOST:PORT\n");
    assert_int_equal(run_line("profile stream 10.0.3.2:9000"), 1);
    assert_string_equal(output, "profile stream: that address is not in the UDP shell's allowlist (udpsh.allow)\n");
    /* unkeyed UDP: PORT alone goes to the requester; another address is refused */
    origin.udp = true;
    origin.ip = 0x0a000207;
    assert_int_equal(run_line("profile stream 10.0.2.8:9000"), 1);
    assert_string_equal(output, "profile stream: an unkeyed request may stream only to its own address (udpsh.key)\n");
    assert_false(spawned_task_pending());
    uint32_t id = run_id_now();
    assert_int_equal(run_line("profile stream 9000 1"), 0);
    expect_output("profile stream: run %08x to 10.0.2.7:9000 for 1 s, source tick, headroom 1.0 s at 1 kHz per cpu\n", id);
    /* an unkeyed request from elsewhere may not stop it; a keyed one may */
    origin.ip = 0x0a000208;
    assert_int_equal(run_line("profile stream stop"), 1);
    assert_string_equal(output, "profile stream: an unkeyed request may stop only a stream to its own address\n");
    assert_true(spawned_task_pending()); /* still running */
    origin.keyed = true;
    assert_int_equal(run_line("profile stream stop"), 0);
    assert_false(spawned_task_pending());
    parse_sent(0x0a000207, 9000, UINT32_MAX);
    /* keyed: any allowlisted address */
    assert_int_equal(run_line("profile stream 10.0.2.99:9000 1"), 0);
    run_stream_task();
    assert_int_equal(fake_net_sent[fake_net_nsent - 1].dst_ip, 0x0a000263);
}

/* An unkeyed UDP request's stream ends when the token that allowed it expires: a stream without SECONDS, or
 * with more than the token has left, is cut to it (and says so); a shorter one, and a keyed one, are not. */
static void test_an_unkeyed_stream_is_cut_to_its_token(void **state)
{
    (void)state;
    origin.udp = true;
    origin.ip = 0x0a000207;
    origin.until_ns = fake_time_ns + 2500000000ll;
    uint32_t id = run_id_now();
    assert_int_equal(run_line("profile stream 9000"), 0);
    expect_output("profile stream: run %08x to 10.0.2.7:9000 for 2 s (cut to when the token of this unkeyed request "
                  "expires), source tick, headroom 1.0 s at 1 kHz per cpu\n", id);
    run_stream_task();
    struct received r = parse_sent(0x0a000207, 9000, UINT32_MAX);
    assert_int_equal(r.end.reason, PROFILE_STREAM_TIME);
    origin.until_ns = fake_time_ns + 2500000000ll;
    id = run_id_now();
    assert_int_equal(run_line("profile stream 9000 1"), 0);
    expect_output("profile stream: run %08x to 10.0.2.7:9000 for 1 s, source tick, headroom 1.0 s at 1 kHz per cpu\n",
                  id);
    run_stream_task();
    /* keyed: the UDP shell gives no expiry */
    origin.keyed = true;
    origin.until_ns = 0;
    assert_int_equal(run_line("profile stream 9000 600"), 0);
    assert_non_null(strstr(output, " for 600 s, source tick"));
    assert_int_equal(run_line("profile stream stop"), 0);
}

static void test_bad_words_start_nothing(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "profile stream 10.0.2.2", "profile stream 10.0.2.2:0", "profile stream 10.0.2.2:9000 86401",
        "profile stream 10.0.2.2:9000 1 all 2", "profile stream stop now", "profile stream 10.0.2.2:9000 x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(run_line(bad[i]), 1);
        assert_string_equal(output, "usage: profile stream [HOST:PORT|PORT [SECONDS] [pid|all] [wall] | stop]\n");
    }
    assert_int_equal(run_line("profile stream 10.0.2.2:9000 1 4242"), 1);
    assert_string_equal(output, "profile stream: no task with pid 4242\n");
    assert_false(spawned_task_pending());
    assert_int_equal(fake_net_nsent, 0);
    burn_expect_profiler_free();
}

UNIT_MAIN_EACH(setup, NULL, burn_setup_group, NULL,
               test_a_timed_stream_sends_every_sample, test_stop_ends_it, test_failed_sends_are_counted_unsent,
               test_the_network_going_away_ends_it, test_where_it_may_go_as_the_command_applies_it,
               test_an_unkeyed_stream_is_cut_to_its_token, test_bad_words_start_nothing)
