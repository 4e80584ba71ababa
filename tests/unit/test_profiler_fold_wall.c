/* tests/unit/test_profiler_fold_wall.c: a wall run's records through the fold and the report
 * (kernel/profiler/fold.c, report.c) and the raw lines (raw.c): the split of every task's time by what it was
 * doing and on what it waited, each task's own split, a chain running kept apart from the same chain waiting,
 * and the raw context words that carry a wall sample's state, round-tripped and refused when malformed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "profiler_fold_fixture.h"
#include "kernel/task.h"
#include "unit_main.h"

#define WALL_NS 10000000u

/* A wall sample of the current run, as the sweep writes it. */
static void push_wall(unsigned cpu, uint32_t pid, enum task_activity act, enum task_wait why,
                      const uintptr_t *frames, unsigned n)
{
    push_record(cpu, pid, run.run, frames, n);
    struct profile_ring *ring = &rings[cpu];
    struct profile_record *rec = &ring->records[(atomic_load(&ring->head) - 1) & ring->mask];
    rec->flags = PROFILE_REC_WALL;
    rec->wall.activity = (uint8_t)act;
    rec->wall.waiting_on = (uint8_t)why;
    rec->period = WALL_NS;
}

static void wall_run(void)
{
    run.wall = true;
    run.wall_period_ns = WALL_NS;
    run.tick_reason = "a wall profile sweeps every task on the tick";
}

#define WALL_HEADER(samples, cpus)                                                                            \
    "profiled 1000 ms\n" #samples " samples on " #cpus " cpus, 0 dropped, source tick at 100 Hz (a wall "      \
    "profile sweeps every task on the tick)\n"

static void test_the_split_of_every_task_by_activity_and_wait(void **state)
{
    (void)state;
    wall_run();
    /* Task 21 computes 3 of 10 periods and sleeps 7; task 22 waits on the network 8 and is runnable 2. */
    for (int i = 0; i < 3; i++)
        push_wall(0, 21, TASK_ACT_RUNNING, TASK_WAIT_NONE, FRAMES(SPIN + 4, MAIN + 0x10));
    for (int i = 0; i < 7; i++)
        push_wall(0, 21, TASK_ACT_WAITING, TASK_WAIT_TIMER, FRAMES(RECEIVE + 8, MAIN + 0x10));
    for (int i = 0; i < 8; i++)
        push_wall(1, 22, TASK_ACT_WAITING, TASK_WAIT_NET, FRAMES(RECEIVE + 0x20, MAIN + 0x30));
    for (int i = 0; i < 2; i++)
        push_wall(1, 22, TASK_ACT_RUNNABLE, TASK_WAIT_NONE, FRAMES(COPY + 2, MAIN + 0x30));
    assert_string_equal(report(8),
                        WALL_HEADER(20, 2)
                        "wall: 2 tasks x 1000 ms every 10 ms: 15.0% running, 10.0% runnable, 75.0% waiting "
                        "(net 40.0%, sleep 35.0%)\n"
                        "task 21: 30.0% running, 0.0% runnable, 70.0% waiting\n"
                        "task 22: 0.0% running, 20.0% runnable, 80.0% waiting\n"
                        "40.0% 8 VirtioNet::Receive+0x20 [waiting net]\n"
                        "        <- Main+0x30\n"
                        "35.0% 7 VirtioNet::Receive+0x8 [waiting sleep]\n"
                        "        <- Main+0x10\n"
                        "15.0% 3 Spin+0x4 [running]\n"
                        "        <- Main+0x10\n"
                        "10.0% 2 NetFrame::Copy+0x2 [runnable]\n"
                        "        <- Main+0x30\n");
}

static void test_one_chain_running_and_waiting_is_two_chains(void **state)
{
    (void)state;
    wall_run();
    push_wall(2, 30, TASK_ACT_RUNNING, TASK_WAIT_NONE, FRAMES(RECEIVE + 8, MAIN + 0x10));
    push_wall(2, 30, TASK_ACT_WAITING, TASK_WAIT_INPUT, FRAMES(RECEIVE + 8, MAIN + 0x10));
    push_wall(2, 30, TASK_ACT_WAITING, TASK_WAIT_INPUT, FRAMES(RECEIVE + 8, MAIN + 0x10));
    push_wall(2, 30, TASK_ACT_WAITING, TASK_WAIT_DEVICE, FRAMES(RECEIVE + 8, MAIN + 0x10));
    const char *out = report(8);
    assert_non_null(strstr(out, "50.0% 2 VirtioNet::Receive+0x8 [waiting input]\n"));
    assert_non_null(strstr(out, "25.0% 1 VirtioNet::Receive+0x8 [running]\n"));
    assert_non_null(strstr(out, "25.0% 1 VirtioNet::Receive+0x8 [waiting device]\n"));
    assert_non_null(strstr(out, "(input 50.0%, device 25.0%)\n"));
}

static void test_a_cpu_run_has_no_split_and_no_marks(void **state)
{
    (void)state;
    PUSH(0, 5, SPIN + 4, MAIN + 0x10);
    const char *out = report(8);
    assert_null(strstr(out, "wall:"));
    assert_null(strstr(out, "task 5:"));
    assert_null(strstr(out, "[running]"));
}

/* ---- the raw form --------------------------------------------------------------------------------------- */

/* line, a wall sample, parsed and formatted back: the very same bytes. */
static void expect_wall_round_trip(const char *line)
{
    struct profile_raw_sample s;
    assert_true(profile_raw_parse_sample(line, strlen(line), &s));
    assert_int_equal(s.flags, PROFILE_REC_WALL);
    char back[PROFILE_RAW_LINE_MAX];
    size_t n = profile_raw_format_sample(&s, back, sizeof back);
    assert_int_equal(n, strlen(line));
    assert_memory_equal(back, line, n);
}

static void test_wall_samples_round_trip_as_raw_lines(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "s 1 22 5000 span=9,work=serve 10000000 waiting=net 0x1220 0x1730\n",
        "s 0 21 5000 - 10000000 running 0x1604 0x1710\n",
        "s 3 23 -7 - 10000000 runnable 0x1102\n",
        "s 2 24 5000 - 10000000 waiting=sleep 0x1208\n",
        "s 2 24 5000 - 10000000 waiting=input 0x1208\n",
        "s 2 24 5000 - 10000000 waiting=task 0x1208\n",
        "s 2 24 5000 - 10000000 waiting=device 0x1208\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        expect_wall_round_trip(lines[i]);
    struct profile_raw_sample s;
    const char *net = lines[0];
    assert_true(profile_raw_parse_sample(net, strlen(net), &s));
    assert_int_equal(s.activity, TASK_ACT_WAITING);
    assert_int_equal(s.waiting_on, TASK_WAIT_NET);
}

static void test_malformed_wall_words_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "s 0 21 5000 - 10000000 waiting 0x1604\n",        /* waiting on nothing named */
        "s 0 21 5000 - 10000000 waiting=none 0x1604\n",   /* "none" is not a wait */
        "s 0 21 5000 - 10000000 waiting=nets 0x1604\n",
        "s 0 21 5000 - 10000000 running,irqs-off 0x1604\n", /* a state is the whole context */
        "s 0 21 5000 - 10000000 irqs-off,running 0x1604\n",
        "s 0 21 5000 - 10000000 Running 0x1604\n",
        "s 0 21 5000 - 10000000 waiting=net,waiting=net 0x1604\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct profile_raw_sample s;
        assert_false(profile_raw_parse_sample(bad[i], strlen(bad[i]), &s));
    }
}

static void test_a_wall_record_becomes_its_raw_line(void **state)
{
    (void)state;
    wall_run();
    push_wall(1, 22, TASK_ACT_WAITING, TASK_WAIT_NET, FRAMES(RECEIVE + 0x20, MAIN + 0x30));
    const struct profile_record *rec = profile_ring_peek(&rings[1]);
    char line[PROFILE_RAW_LINE_MAX];
    size_t n = profile_raw_record_line(rec, line, sizeof line);
    assert_true(n > 0);
    line[n] = 0;
    assert_string_equal(line, "s 1 22 0 - 10000000 waiting=net 0x1220 0x1730\n");
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_the_split_of_every_task_by_activity_and_wait, test_one_chain_running_and_waiting_is_two_chains,
               test_a_cpu_run_has_no_split_and_no_marks, test_wall_samples_round_trip_as_raw_lines,
               test_malformed_wall_words_are_refused, test_a_wall_record_becomes_its_raw_line)
