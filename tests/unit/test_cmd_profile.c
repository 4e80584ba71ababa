/* tests/unit/test_cmd_profile.c: the `profile` command (kernel/shell/cmd_profile.c) around its parser: one usage line
 * and nothing started for bad arguments, an unknown pid, `profile: busy` while another run holds the profiler,
 * the measured window, a whole report of samples taken by ticks during the sleep, and the rings kept (not
 * leaked) across many runs; the window only copies records (no symbol lookup, no output until the stop), and
 * a full copy counts and tells its drops. Tasks, the sleep and the stack walk are the fake kernel's
 * (profiler_burn_fixture.h); the heap is the kernel's own, over a static region; symbol lookups are counted
 * through the linker's --wrap (the .mk).
 * (Split from test_profiler_args.c, which tests the parser alone.) */
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
#include "kernel/profiler/build_id.h"
#include "kernel/shell/commands.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/capture.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/profiler/session.h"
#include "kernel/lib/sink.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

/* ---- fakes for the command ------------------------------------------------------------------------------ */

/* The image, the tasks, the heap, the window's sleeps and the counted lookups are profiler_burn_fixture.c's;
 * every interrupted context has one caller, the first word of its stack (the fake kernel's walk, which
 * also checks it is asked for PROFILE_MAX_FRAMES), so the command's report has a known shape. */

static char output[65536];

/* What had happened by the stop's wait, which comes after the window's last drain and before anything is
 * folded or printed: the lookups made and the output written until then. */
static unsigned lookups_by_stop;
static size_t output_by_stop;

/* The window: the command sleeps in steps of PROFILE_DRAIN_MS, draining the rings after each; every step moves
 * the clock (to its end, plus sleep_extra_ns) and, meanwhile, each CPU takes burn_ticks_per_sleep ticks. The
 * stop's wait for the CPUs to let go of the run sleeps too (task_sleep_ms): that gives each CPU one tick, and
 * is counted apart (stop_waits). */
static int64_t sleep_extra_ns;
static int64_t late_pc_from_ns; /* not 0: from this time on, each step's ticks interrupt late_pc */
static uintptr_t late_pc;
static int stop_waits;
static char *nested_line; /* a command run from inside the window, as another console would */
static char nested_output[256];
static const struct shell_origin console = { 0 }; /* every line here is the console's */

void task_sleep_until(int64_t when_ns)
{
    if (late_pc_from_ns && fake_time_ns >= late_pc_from_ns)
        fake_tick_pc = late_pc;
    burn_window_sleep(when_ns);
    if (nested_line) {
        assert_int_equal(shell_line_run(cmd_profile, nested_line, nested_output, sizeof nested_output, &console),
                         1);
        nested_line = NULL;
    }
    fake_time_ns = when_ns + sleep_extra_ns;
}

static void stop_wait(uint32_t ms)
{
    (void)ms;
    if (stop_waits++ == 0) {
        lookups_by_stop = burn_lookups;
        output_by_stop = strlen(output);
    }
}

/* `profile stream` is linked in (cmd_profile hands it its words) and tested in test_cmd_profile_stream.c;
 * here no stream ever gets a task (tests/unit/no_tasks.c). */

/* The steps a window of ms takes. */
static int drains(uint32_t ms) { return (int)((ms + PROFILE_DRAIN_MS - 1) / PROFILE_DRAIN_MS); }

static int run_line(const char *line) { return shell_line_run(cmd_profile, line, output, sizeof output, &console); }

static int setup(void **state)
{
    (void)state;
    burn_setup(1); /* BurnTask+0x30 (CPU 0), +0x31 (CPU 1) */
    fake_sleep_hook = stop_wait;
    stop_waits = 0;
    sleep_extra_ns = 0;
    late_pc_from_ns = 0;
    nested_line = NULL;
    return 0;
}

/* ---- the command ---------------------------------------------------------------------------------------- */

/* line, run with ticks_per_sleep ticks on every CPU in each step of its window, succeeds. */
static void run_with_ticks(const char *line, unsigned ticks_per_sleep)
{
    burn_ticks_per_sleep = ticks_per_sleep;
    assert_int_equal(run_line(line), 0);
}

/* line, with ticks_per_sleep ticks on every CPU in each step of its window, succeeds and its output begins
 * with expected. */
static void expect_report_start(const char *line, unsigned ticks_per_sleep, const char *expected)
{
    run_with_ticks(line, ticks_per_sleep);
    assert_memory_equal(output, expected, strlen(expected));
}

/* Nothing more was started than the sleeps counted, and the profiler is free to claim. */
static void expect_nothing_started_after_sleeps(int expected_sleeps)
{
    assert_int_equal(burn_sleeps, expected_sleeps);
    burn_expect_profiler_free();
}

/* Nothing was started: no sleep, and the profiler is free to claim. */
static void expect_nothing_started(void) { expect_nothing_started_after_sleeps(0); }

static void test_bad_arguments_print_one_usage_line(void **state)
{
    (void)state;
    static const char *bad[] = {
        "profile 0", "profile 2001", "profile -5", "profile abc", "profile 12x", "profile 1000 all 3 4",
        "profile 1000 all 0", "profile 1000 all 129", "profile 1000 x", "profile 1000 job=a job=b",
        "profile 1000 Job=a", "profile 1000 all 3 raw", "profile 1000 wall wall", "profile wall 1000 all 3 4",
        "profile 1000 walls",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(run_line(bad[i]), 1);
        assert_string_equal(output, "usage: profile [ms] [pid|all] [chains|raw] [key=value] [wall]\n");
    }
    expect_nothing_started();
}

static void test_unknown_pid(void **state)
{
    (void)state;
    assert_int_equal(run_line("profile 500 99"), 1);
    assert_string_equal(output, "profile: no task with pid 99\n");
    expect_nothing_started();
}

static void test_busy(void **state)
{
    (void)state;
    struct profile_run held = { 0 };
    assert_int_equal(profiler_start(&held), PROFILER_OK);
    assert_int_equal(run_line("profile 10"), 1);
    assert_string_equal(output, "profile: busy\n");
    assert_int_equal(burn_sleeps, 0);
    profiler_stop(&held);
    profiler_release();
    assert_int_equal(run_line("profile 10"), 0);
    assert_int_equal(burn_sleeps, drains(10));
}

/* A session holding the profiler (here, as an HTTP profile does) is named, with the seconds its window has
 * left; a run started outside a session, plain busy. */
static void test_busy_names_the_holder(void **state)
{
    (void)state;
    struct profile_session held;
    burn_hold_profiler(&held, 4500, "an HTTP profile (/debug/pprof/profile)");
    assert_int_equal(run_line("profile 10"), 1);
    assert_string_equal(output, "profile: busy: an HTTP profile (/debug/pprof/profile), 5 s left\n");
    fake_time_ns += 2000000000;
    assert_int_equal(run_line("profile 10"), 1);
    assert_string_equal(output, "profile: busy: an HTTP profile (/debug/pprof/profile), 3 s left\n");
    profile_session_run(&held); /* its window, to the end, and the profiler given back */
    assert_int_equal(run_line("profile 10"), 0);
}

static void test_busy_from_another_console_during_the_window(void **state)
{
    (void)state;
    static char line[] = "profile 100";
    nested_line = line;
    assert_int_equal(run_line("profile 10"), 0);
    /* the one busy line: the session that holds the profiler, named */
    assert_string_equal(nested_output, "profile: busy: profile 10 ms from the console, 1 s left\n");
    assert_int_equal(burn_sleeps, drains(10)); /* the nested command did not sleep a window of its own */
}

static void test_whole_report(void **state)
{
    (void)state;
    run_with_ticks("profile 2000 all 3", 6);
    assert_int_equal(burn_slept_ms, 2000);
    assert_int_equal(burn_sleeps, drains(2000));
    /* 6 ticks in each of the 40 steps, on each CPU: more than a ring holds, and none dropped. */
    assert_string_equal(output,
                        "profiled 2000 ms\n"
                        "480 samples on 2 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:240 1:240\n"
                        "50.0% 240 BurnInner+0x10..0x20\n"
                        "        <- BurnTask+0x30\n"
                        "50.0% 240 BurnInner+0x10..0x20\n"
                        "        <- BurnTask+0x31\n");
}

static void test_pid_filter_and_chain_count(void **state)
{
    (void)state;
    run_with_ticks("profile 500 101 1", 3);
    assert_int_equal(burn_slept_ms, 500);
    assert_string_equal(output,
                        "profiled 500 ms\n"
                        "30 samples on 1 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:0 1:30\n"
                        "100.0% 30 BurnInner+0x10..0x20\n"
                        "        <- BurnTask+0x31\n");
}

static void test_pid_asleep(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 3;
    fake_task[5].pid = 12; /* exists, but runs on a CPU that is not online, so it is never sampled */
    assert_int_equal(run_line("profile 500 12"), 0);
    assert_string_equal(output,
                        "profiled 500 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:0 1:0\n"
                        "no samples for pid 12: the task may simply have been asleep the whole window\n");
}

static void test_window_is_measured(void **state)
{
    (void)state;
    sleep_extra_ns = 3499999; /* the sleep overran by just under 3.5 ms */
    assert_int_equal(run_line("profile 1000"), 0);
    assert_memory_equal(output, "profiled 1003 ms\n", 17);
    sleep_extra_ns = 3500000;
    assert_int_equal(run_line("profile 1000"), 0);
    assert_memory_equal(output, "profiled 1004 ms\n", 17);
}

static void test_full_rings_count_drops(void **state)
{
    (void)state;
    /* More ticks in one step than a ring holds, on one CPU (the window's copy holds at least a ring's worth):
     * the reader fell behind, and the step drops 10. */
    fake_cpu_count = 1;
    expect_report_start("profile 50 all 1", PROFILE_RING_RECORDS + 10,
                        "profiled 50 ms\n"
                        "1024 samples on 1 cpus, 10 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:1024/10 1:0\n");
    assert_null(strstr(output, "copy of the rings"));
    /* under a filter the ring's drops are every task's (it drops before the filter), and the header says so */
    expect_report_start("profile 50 100 1", PROFILE_RING_RECORDS + 10,
                        "profiled 50 ms\n"
                        "1024 samples on 1 cpus, 10 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "dropped: the 10 are of every task's samples: a full ring drops before the filter\n"
                        "per cpu: 0:1024/10 1:0\n");
}

/* Ticks far faster than the rate the window's copy was sized for (10 Hz: its least, one ring's worth, 1024
 * records): what does not fit is dropped and told in a line of its own -- not in the header's drops, which are
 * the per-CPU buffers' (the spec) -- and the raw trailer counts every loss. */
static void test_a_full_copy_counts_and_tells_its_drops(void **state)
{
    (void)state;
    /* First step: CPU 0's 600, then 424 of CPU 1's; second step: nothing more fits. */
    expect_report_start("profile 100 all 1", 600,
                        "profiled 100 ms\n"
                        "1024 samples on 2 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:600 1:424\n");
    assert_non_null(strstr(output, "\ndropped 1376 samples: the window's copy of the rings (1024 records) was full\n"));
    /* raw: the trailer counts them too */
    assert_int_equal(run_line("profile 100 all raw"), 0);
    assert_non_null(strstr(output, "\n# kprof raw end samples=1024 dropped=1376\n"));
}

/* The capture's room: the window and one drain step at the source's rate on every CPU, a power of two, at
 * least a ring and at most 64 CPUs at 1 kHz for 2000 ms; short of memory, the largest half that fits. */
static void test_the_capture_is_sized_for_the_window(void **state)
{
    (void)state;
    assert_int_equal(profile_capture_size(4, 100, 0, 2000000, 1000), 1024);   /* 4 x 106: a ring's worth */
    assert_int_equal(profile_capture_size(4, 1000, 0, 2000000, 2000), 16384); /* 4 x 2051 */
    /* A counter overflowing every 2,000,000 cycles at 2,000,000 a ms: 1 kHz, allowed twice that. */
    assert_int_equal(profile_capture_size(4, 100, 2000000, 2000000, 2000), 32768); /* 4 x 4101 */
    assert_int_equal(profile_capture_size(1, 4000, 2000000, 2000000, 2000), 16384); /* the tick, faster */
    assert_int_equal(profile_capture_size(64, 100, 2000000, 2000000, 2000), PROFILE_CAPTURE_MAX_RECORDS);
    assert_int_equal(profile_capture_size(200, 1000, 0, 2000000, 2000), PROFILE_CAPTURE_MAX_RECORDS);
    assert_int_equal(profile_capture_size(MAX_CPUS, 1000, 0, 2000000, 2000), PROFILE_CAPTURE_MAX_RECORDS);

    /* 64 CPUs at 4 kHz want the most, 14 MiB; this heap has 8 MiB, so the capture takes a smaller half. */
    fake_cpu_count = 64;
    fake_tick_hz = TICK_HZ_MAX;
    struct profile_capture cap;
    assert_true(profile_capture_create(&cap, 2000));
    uint32_t size = cap.ring.mask + 1;
    assert_true(size >= PROFILE_RING_RECORDS && size < PROFILE_CAPTURE_MAX_RECORDS);
    assert_null(kmalloc((size_t)size * 2 * sizeof(struct profile_record))); /* the next larger did not fit */
    /* and with that taken, another cannot have even a ring's worth of the rest: refused, not half made */
    struct profile_capture second;
    void *rest[64];
    unsigned held = 0;
    while (held < 64 && (rest[held] = kmalloc(64 * 1024)))
        held++;
    assert_false(profile_capture_create(&second, 2000));
    while (held)
        kfree(rest[--held]);
    profile_capture_destroy(&cap);
}

/* The window does nothing that would show in the profile it takes: its drains copy records, and every symbol
 * lookup, fold and line of output comes after the stop. */
static void test_the_window_only_copies(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 5;
    static const char *const lines[] = { "profile 500 all 3", "profile 500 all raw" };
    for (unsigned i = 0; i < 2; i++) {
        burn_lookups = 0;
        stop_waits = 0;
        lookups_by_stop = output_by_stop = 12345;
        assert_int_equal(run_line(lines[i]), 0);
        assert_int_equal(stop_waits > 0, 1);
        assert_int_equal(lookups_by_stop, 0); /* drained 10 times, 100 records, none looked up */
        assert_int_equal(output_by_stop, 0);  /* nor printed */
        if (i == 0) {
            assert_true(burn_lookups >= 100); /* the fold, after the stop */
            assert_memory_equal(output, "profiled 500 ms\n100 samples on 2 cpus, 0 dropped", 48);
        } else {
            assert_non_null(strstr(output, "\n# kprof raw end samples=100 dropped=0\n"));
        }
    }
}

static void test_no_drops_at_the_counter_rate(void **state)
{
    (void)state;
    /* 1 kHz on every CPU (50 samples a step) for the longest window: twice what a ring holds, none dropped. */
    fake_cpu_count = 4;
    fake_tick_hz = 1000;
    expect_report_start("profile 2000 all 1", 50,
                        "profiled 2000 ms\n"
                        "8000 samples on 4 cpus, 0 dropped, source tick at 1000 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:2000 1:2000 2:2000 3:2000\n");
}

static void test_runs_keep_their_rings(void **state)
{
    (void)state;
    /* The rings are allocated once and kept: after the first run the heap is back at the same point after
     * every run, and the report's table was given back each time. */
    run_with_ticks("profile 1", 2);
    struct heap_stats before, after;
    heap_get_stats(&before);
    for (int i = 0; i < 200; i++)
        assert_int_equal(run_line("profile 1"), 0);
    heap_get_stats(&after);
    assert_int_equal(after.used_bytes, before.used_bytes);
    assert_int_equal(after.live_blocks, before.live_blocks);
    const char *why = NULL;
    assert_true(heap_check(&why));
}

static void test_label_filter_and_breakdown(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 4;
    task_set_labels(&fake_task[1], label_intern_one("job", "b", NULL));
    assert_int_equal(run_line("profile 2000 all 3 job=b"), 0);
    assert_string_equal(output,
                        "profiled 2000 ms\n"
                        "160 samples on 1 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:0 1:160\n"
                        "labels: 100.0% (160) job=b\n"
                        "100.0% 160 BurnInner+0x10..0x20\n"
                        "        <- BurnTask+0x31\n");
    assert_int_equal(run_line("profile 2000 all 3"), 0);
    assert_string_equal(output,
                        "profiled 2000 ms\n"
                        "320 samples on 2 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:160 1:160\n"
                        "labels: 50.0% (160) (none), 50.0% (160) job=b\n"
                        "50.0% 160 BurnInner+0x10..0x20\n"
                        "        <- BurnTask+0x30\n"
                        "50.0% 160 BurnInner+0x10..0x20\n"
                        "        <- BurnTask+0x31\n");
    assert_int_equal(run_line("profile 2000 all 3 job=c"), 0);
    assert_string_equal(output,
                        "profiled 2000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 10 Hz (no PMU backend for CPU vendor \"\")\n"
                        "per cpu: 0:0 1:0\n"
                        "no samples with label job=c: no task that carried it was sampled in the window\n");
}

static void test_raw_command(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 2;
    fake_time_ns = 7000000000;
    task_set_labels(&fake_task[0], label_intern_one("job", "a", NULL));
    assert_int_equal(run_line("profile 50 all raw"), 0);
    assert_int_equal(burn_slept_ms, 50);
    /* One drain step each: the fake ticks before its clock moves, so every sample carries the window's start;
     * each stop waits 1 ms for the CPUs to let go of the run, so the next window starts 51 ms later. */
    assert_string_equal(output,
                        "# kprof raw v2 source=tick period=100000000 unit=ns window_ms=50 cpus=2 build_id=deadbeef\n"
                        "s 0 100 7000000000 job=a 100000000 - 0x1010 0x1130\n"
                        "s 0 100 7000000000 job=a 100000000 - 0x1018 0x1130\n"
                        "s 1 101 7000000000 - 100000000 - 0x1010 0x1131\n"
                        "s 1 101 7000000000 - 100000000 - 0x1018 0x1131\n"
                        "# kprof raw end samples=4 dropped=0\n");
    assert_int_equal(run_line("profile 50 101 raw"), 0);
    assert_string_equal(output,
                        "# kprof raw v2 source=tick period=100000000 unit=ns window_ms=50 cpus=2 build_id=deadbeef\n"
                        "s 1 101 7051000000 - 100000000 - 0x1010 0x1131\n"
                        "s 1 101 7051000000 - 100000000 - 0x1018 0x1131\n"
                        "# kprof raw end samples=2 dropped=0\n");
    assert_int_equal(run_line("profile 50 raw job=a"), 0);
    assert_string_equal(output,
                        "# kprof raw v2 source=tick period=100000000 unit=ns window_ms=50 cpus=2 build_id=deadbeef\n"
                        "s 0 100 7102000000 job=a 100000000 - 0x1010 0x1130\n"
                        "s 0 100 7102000000 job=a 100000000 - 0x1018 0x1130\n"
                        "# kprof raw end samples=2 dropped=0\n");
    /* and the profiler was given back each time */
    expect_nothing_started_after_sleeps(3 * drains(50));
}

static void test_more_cpus_later_get_rings(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 1;
    fake_cpu_count = 3;
    assert_int_equal(run_line("profile 1"), 0);
    assert_memory_equal(output, "profiled 1 ms\n3 samples on 3 cpus", 33);
}

/* The percentage of the report's chain whose frame 0 is name, or -1. */
static double chain_percent(const char *name)
{
    for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        double percent;
        char frame[64];
        if (sscanf(line, "%lf%% %*u %63s", &percent, frame) == 2 && strncmp(frame, name, strlen(name)) == 0)
            return percent;
    }
    return -1;
}

/* 256 CPUs at 1 kHz for 2000 ms make 525056 records, more than the window's copy holds (here a heap of 8 MiB
 * gives it 32768): it keeps every CPU's every Nth, over the whole window, each weighing N, and the header says
 * so -- where it kept the window's first 130 ms on the lowest CPUs before. */
static void test_a_window_larger_than_its_copy_is_thinned_evenly(void **state)
{
    (void)state;
    assert_true(profiler_set_ring_records("64")); /* 252 more rings: 50 records a CPU a step */
    fake_cpu_count = MAX_CPUS;
    fake_tick_hz = 1000;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        fake_stack[i][0] = FAKE_BURN_TASK + 0x30; /* one caller: two chains in all */
    /* the window's last quarter is spent at BurnTask+0x80 */
    late_pc_from_ns = fake_time_ns + 1500 * 1000000ll;
    late_pc = FAKE_BURN_TASK + 0x80;
    /* a first run gives the 252 new CPUs their rings, as the kernel's first run does before any capture is
     * this large */
    run_with_ticks("profile 1", 1);
    run_with_ticks("profile 2000 all 2", 50);
    unsigned keep = 0;
    unsigned long long left_out = 0;
    const char *thinned = strstr(output, "\nthinned: kept 1 in ");
    assert_non_null(thinned);
    assert_int_equal(sscanf(thinned, "\nthinned: kept 1 in %u of each cpu's samples, evenly over the window, each "
                                     "weighing %*u (%llu left out", &keep, &left_out), 2);
    assert_true(keep > 1);
    /* no drops: what the copy could not hold was left out evenly, not at the window's end */
    unsigned long long samples = 0, dropped = 1;
    assert_int_equal(sscanf(output, "profiled 2000 ms\n%llu samples on 256 cpus, %llu dropped", &samples, &dropped), 2);
    assert_int_equal(dropped, 0);
    /* each CPU's 2000 window ticks, its 1st, (keep+1)th, ... kept */
    unsigned per_cpu = (2000 + keep - 1) / keep;
    assert_int_equal(samples, (unsigned long long)MAX_CPUS * per_cpu);
    assert_int_equal(left_out, (unsigned long long)MAX_CPUS * (2000 - per_cpu));
    char highest[32];
    snprintf(highest, sizeof highest, " 255:%u\n", per_cpu);
    assert_non_null(strstr(output, highest));
    /* the last quarter is there, at its share of the weight */
    double late = chain_percent("BurnTask+0x80"), early = chain_percent("BurnInner+0x10");
    assert_true(late > 24.0 && late < 26.0);
    assert_true(early > 74.0 && early < 76.0);
}

/* 8 MiB: room for 256 CPUs' rings and a capture that holds less than their window (the thinning test). */
static int group_setup(void **state)
{
    (void)state;
    burn_heap_init(8 << 20);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bad_arguments_print_one_usage_line, setup),
        cmocka_unit_test_setup(test_unknown_pid, setup),
        cmocka_unit_test_setup(test_busy, setup),
        cmocka_unit_test_setup(test_busy_names_the_holder, setup),
        cmocka_unit_test_setup(test_busy_from_another_console_during_the_window, setup),
        cmocka_unit_test_setup(test_whole_report, setup),
        cmocka_unit_test_setup(test_pid_filter_and_chain_count, setup),
        cmocka_unit_test_setup(test_pid_asleep, setup),
        cmocka_unit_test_setup(test_window_is_measured, setup),
        cmocka_unit_test_setup(test_full_rings_count_drops, setup),
        cmocka_unit_test_setup(test_a_full_copy_counts_and_tells_its_drops, setup),
        cmocka_unit_test_setup(test_the_window_only_copies, setup),
        cmocka_unit_test_setup(test_the_capture_is_sized_for_the_window, setup),
        cmocka_unit_test_setup(test_runs_keep_their_rings, setup),
        /* before the next: the header's cpus= counts the CPUs with rings, and it adds a third */
        cmocka_unit_test_setup(test_label_filter_and_breakdown, setup),
        cmocka_unit_test_setup(test_raw_command, setup),
        cmocka_unit_test_setup(test_more_cpus_later_get_rings, setup),
        /* after the 3-CPU test: rings, once allocated, stay for every later run */
        cmocka_unit_test_setup(test_no_drops_at_the_counter_rate, setup),
        /* last: it gives every CPU a ring */
        cmocka_unit_test_setup(test_a_window_larger_than_its_copy_is_thinned_evenly, setup),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
