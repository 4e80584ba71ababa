/* tests/unit/test_cmd_locks.c: the `locks` and `lockfight` commands (kernel/shell/cmd_locks.c, cmd_lockfight.c)
 * over the kernel's lock table and the fake kernel's image -- `locks` with nothing counted says so in one line;
 * with chains counted, the whole output: the totals, the call sites most time spun first, each with its waits,
 * its time and its average and its chain as `tasks` prints chains, N of them, a chainless one named, the
 * "other" line last; no memory for the copy and bad words get one line each. `lockfight MS N` spreads its N
 * tasks over the CPUs (each run here in turn, to its deadline) and says what the run did once the last ends; a
 * second run meanwhile is refused, bad words get the usage line and start nothing, tasks that could not start
 * are said and end the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "counting_heap.h"
#include "fake_hal.h"
#include "fake_kernel.h"
#include "shell_line.h"
#include "unit_main.h"
#include "kernel/profiler/lock_sites.h"
#include "kernel/shell/commands.h"
#include "kernel/task.h"

/* ---- task_spawn: the tasks are kept, not run, until the test runs them ----------------------------------- */

#define SPAWNED_MAX 16
static struct task spawned[SPAWNED_MAX];
static unsigned nspawned, spawn_room;

struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    if (nspawned == spawn_room)
        return NULL;
    struct task *t = &spawned[nspawned];
    memset(t, 0, sizeof *t);
    t->pid = 40 + nspawned++;
    t->cpu = (unsigned)cpu;
    strncpy(t->name, name, sizeof t->name - 1);
    t->entry = entry;
    t->arg = arg;
    return t;
}

static void run_spawned(void)
{
    for (unsigned i = 0; i < nspawned; i++)
        spawned[i].entry(spawned[i].arg);
}

/* ---- the test's side ------------------------------------------------------------------------------------- */

static char out[4096];

static int run(int (*cmd)(int, char **, struct sink *, const struct shell_origin *), const char *line)
{
    static const struct shell_origin console = { .udp = false };
    memset(out, 0, sizeof out);
    return shell_line_run(cmd, line, out, sizeof out - 1, &console);
}

static int setup(void **state)
{
    (void)state;
    memset(&lock_sites, 0, sizeof lock_sites);
    counting_heap_reset();
    nspawned = 0;
    spawn_room = SPAWNED_MAX;
    fake_cpu_count = 4;
    fake_time_ns = 1000000000;
    fake_time_step_ns = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_cpu_count = 1;
    fake_time_step_ns = 0;
    assert_int_equal(live_allocations, 0);
    return 0;
}

static void test_locks_with_nothing_counted_says_so(void **state)
{
    (void)state;
    assert_int_equal(run(cmd_locks, "locks"), 0);
    assert_string_equal(out, "locks: no contention since boot: no spinlock acquisition had to wait\n");
}

static void test_locks_prints_the_sites_that_spun_longest_first(void **state)
{
    (void)state;
    const uintptr_t inner[] = { FAKE_BURN_INNER + 0x10, FAKE_BURN_TASK + 0x20 };
    const uintptr_t task[] = { FAKE_BURN_TASK + 0x30 };
    const uintptr_t outside[] = { 0x9000 };
    block_table_add(&lock_sites, task, 1, TASK_WAIT_NONE, 2000);                 /* 2 us */
    block_table_add(&lock_sites, inner, 2, TASK_WAIT_NONE, 1500000);             /* 1.5 ms */
    block_table_add(&lock_sites, inner, 2, TASK_WAIT_NONE, 2500000);             /* 2.5 ms: 4 ms in 2 */
    block_table_add(&lock_sites, outside, 1, TASK_WAIT_NONE, 1000);
    block_table_add(&lock_sites, NULL, 0, TASK_WAIT_NONE, 3000000);              /* a CPU with no task yet */
    atomic_store(&lock_sites.other_count, 7);
    atomic_store(&lock_sites.other_delay_ns, 70000);
    assert_int_equal(run(cmd_locks, "locks 3"), 0);
    assert_string_equal(out,
                        "locks: 12 contended acquisitions since boot at 4 call sites, 7.073 ms spun; "
                        "the 3 that spun longest:\n"
                        "2 waits, 4.000 ms spun (2.000 ms each)\n"
                        "        <- BurnInner+0x10\n"
                        "        <- BurnTask+0x20\n"
                        "1 waits, 3.000 ms spun (3.000 ms each)\n"
                        "        [no frames] (a cpu with no task yet)\n"
                        "1 waits, 0.002 ms spun (0.002 ms each)\n"
                        "        <- BurnTask+0x30\n"
                        "other call sites (past the table's 256): 7 waits, 0.070 ms spun (0.010 ms each)\n");
    /* the default shows all four; the one outside the image as its address */
    assert_int_equal(run(cmd_locks, "locks"), 0);
    assert_non_null(strstr(out, "the 4 that spun longest:\n"));
    assert_non_null(strstr(out, "1 waits, 0.001 ms spun (0.001 ms each)\n        <- 0x9000\n"));
}

static void test_one_site_is_one_call_site(void **state)
{
    (void)state;
    const uintptr_t task[] = { FAKE_BURN_TASK + 0x30 };
    block_table_add(&lock_sites, task, 1, TASK_WAIT_NONE, 2000);
    assert_int_equal(run(cmd_locks, "locks 1"), 0);
    assert_string_equal(out, "locks: 1 contended acquisitions since boot at 1 call site, 0.002 ms spun; the 1 that "
                             "spun longest:\n1 waits, 0.002 ms spun (0.002 ms each)\n        <- BurnTask+0x30\n");
}

static void test_locks_without_memory_says_so(void **state)
{
    (void)state;
    const uintptr_t task[] = { FAKE_BURN_TASK + 0x30 };
    block_table_add(&lock_sites, task, 1, TASK_WAIT_NONE, 2000);
    allocations_fail = true;
    assert_int_equal(run(cmd_locks, "locks"), 1);
    assert_string_equal(out, "locks: no memory for a copy of the lock table\n");
}

static void test_bad_words_get_the_usage_line(void **state)
{
    (void)state;
    const char *locks[] = { "locks 0", "locks 257", "locks x", "locks 1 2", "locks -1" };
    for (size_t i = 0; i < sizeof locks / sizeof locks[0]; i++) {
        assert_int_equal(run(cmd_locks, locks[i]), 1);
        assert_string_equal(out, "usage: locks [N] (N 1..256, default 10)\n");
    }
    const char *fights[] = { "lockfight 0 4", "lockfight 60001 4", "lockfight 10 1", "lockfight 10 17",
                             "lockfight 10", "lockfight x 4", "lockfight 10 4 5" };
    for (size_t i = 0; i < sizeof fights / sizeof fights[0]; i++) {
        assert_int_equal(run(cmd_lockfight, fights[i]), 1);
        assert_string_equal(out, "usage: lockfight [MS N] (MS 1..60000, N 2..16)\n");
    }
    assert_int_equal(nspawned, 0);
}

static void test_lockfight_spreads_its_tasks_and_reports_the_run(void **state)
{
    (void)state;
    assert_int_equal(run(cmd_lockfight, "lockfight"), 0);
    assert_string_equal(out, "lockfight: no run finished yet\n");
    assert_int_equal(run(cmd_lockfight, "lockfight 2 5"), 0);
    assert_string_equal(out, "lockfight: started 5 tasks for 2 ms on one spinlock (pids 40 41 42 43 44)\n");
    assert_int_equal(nspawned, 5);
    for (unsigned i = 0; i < nspawned; i++) {
        assert_string_equal(spawned[i].name, "lockfight");
        assert_int_equal(spawned[i].cpu, i % 4); /* round the CPUs */
    }
    assert_int_equal(run(cmd_lockfight, "lockfight 2 2"), 1);
    assert_string_equal(out, "lockfight: busy (a run is in progress)\n");
    assert_int_equal(run(cmd_lockfight, "lockfight"), 0);
    assert_string_equal(out, "lockfight: 5 tasks running\n");
    fake_time_step_ns = 1000; /* each clock read 1 us on: the tasks' loops reach their deadline */
    run_spawned();
    fake_time_step_ns = 0;
    assert_int_equal(run(cmd_lockfight, "lockfight"), 0);
    unsigned tasks, ms;
    unsigned long long rounds;
    assert_int_equal(sscanf(out, "lockfight: last run %u tasks, %llu rounds in %u ms\n", &tasks, &rounds, &ms), 3);
    assert_int_equal(tasks, 5);
    assert_true(rounds >= 5 && ms >= 2);
    /* one at a time here: the lock was never found held */
    struct block_row rows[1], other;
    assert_int_equal(block_table_snapshot(&lock_sites, rows, 1, &other), 0);
    assert_int_equal(other.count, 0);
}

static void test_lockfight_says_what_could_not_start(void **state)
{
    (void)state;
    spawn_room = 1;
    assert_int_equal(run(cmd_lockfight, "lockfight 2 3"), 0);
    assert_string_equal(out, "lockfight: started 3 tasks for 2 ms on one spinlock (pids 40)\n"
                             "lockfight: only 1 of 3 tasks could be started\n");
    fake_time_step_ns = 1000;
    run_spawned();
    assert_int_equal(run(cmd_lockfight, "lockfight"), 0);
    assert_non_null(strstr(out, "lockfight: last run 3 tasks, "));
    spawn_room = 0;
    nspawned = 0;
    assert_int_equal(run(cmd_lockfight, "lockfight 2 3"), 1);
    assert_non_null(strstr(out, "lockfight: only 0 of 3 tasks could be started\n"));
    spawn_room = SPAWNED_MAX; /* the run ended with none started: a new one may begin */
    assert_int_equal(run(cmd_lockfight, "lockfight 2 2"), 0);
    run_spawned();
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL, test_locks_with_nothing_counted_says_so,
               test_locks_prints_the_sites_that_spun_longest_first, test_one_site_is_one_call_site,
               test_locks_without_memory_says_so,
               test_bad_words_get_the_usage_line, test_lockfight_spreads_its_tasks_and_reports_the_run,
               test_lockfight_says_what_could_not_start)
