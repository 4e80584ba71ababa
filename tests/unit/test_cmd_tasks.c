/* tests/unit/test_cmd_tasks.c: the `tasks` command (kernel/shell/cmd_tasks.c) over a task table of the test's own
 * -- the whole output for a table with each kind of task (idle, running here, running on another CPU, waiting
 * with a chain from its blocking call, preempted with its pc first, exited), labels and span as `ps` prints them;
 * then the second look around each walk: a task its CPU switched to meanwhile is walked again, one that ran
 * during every try says "(ran meanwhile)", one that started running says where, one that left its wait for
 * another is walked again, one that exited is left out; tasks spawned between the count and the copy are counted, not lost; no memory and
 * bad words get one line. The chains come from the fake kernel's task_chain_off_cpu (fake_chain_hook), which
 * also plays the other CPU; the symbols are its default image (BurnInner, BurnTask). Nothing leaks. */
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
#include "kernel/labels.h"
#include "kernel/shell/commands.h"
#include "kernel/task.h"

#define MS 1000000ll
#define NOW (5000 * MS)
#define TRIES 3 /* cmd_tasks.c's TASKS_WALK_TRIES */
#define MAX_TABLE 24

/* ---- the task table task_for_each walks ---------------------------------------------------------------- */

static struct task *table[MAX_TABLE];
static unsigned table_len;
/* Tasks that appear after the first task_for_each (the count): spawned while the command ran. */
static unsigned late_tasks;
static struct task late[MAX_TABLE];
static unsigned for_each_calls;

void task_for_each(void (*fn)(struct task *task, void *arg), void *arg)
{
    for (unsigned i = 0; i < table_len; i++)
        fn(table[i], arg);
    if (for_each_calls++ > 0)
        for (unsigned i = 0; i < late_tasks; i++)
            fn(&late[i], arg);
}

static struct task tasks[8];

static struct task *add(unsigned i, uint32_t pid, unsigned cpu, const char *name, int state)
{
    struct task *t = &tasks[i];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->cpu = cpu;
    strcpy(t->name, name);
    atomic_store(&t->state, state);
    table[table_len++] = t;
    return t;
}

/* ---- the other CPU, at the walk ---------------------------------------------------------------------------- */

static const uintptr_t wait_chain[] = { FAKE_BURN_INNER + 0x10, FAKE_BURN_TASK + 0x30 };
static unsigned walks;
static unsigned switch_during; /* walks during which the task's CPU switches to it */
static bool starts_running;    /* the task is running once walked */
static bool rewaits;           /* the task leaves its blocking call for another during the first walk */
static bool exits;             /* the task of pid 2 exits during its walk */

static int chain_hook(const struct task *task, uintptr_t *out, int max)
{
    struct task *t = (struct task *)task;
    assert_int_equal(max, 16);
    walks++;
    if (walks <= switch_during)
        atomic_fetch_add(&t->switches, 1);
    if (starts_running)
        atomic_store(&t->state, TASK_RUNNING);
    if (exits && t->pid == 2)
        atomic_store(&t->state, TASK_DEAD);
    if (rewaits && walks == 1)
        atomic_store(&t->wait_frame, atomic_load(&t->wait_frame) + 0x40);
    memcpy(out, wait_chain, sizeof wait_chain);
    return 2;
}

static char out[8192];

static int run(const char *line)
{
    out[0] = '\0';
    return shell_line_run(cmd_tasks, line, out, sizeof out, &(struct shell_origin){ .udp = false });
}

static int setup(void **state)
{
    (void)state;
    fake_tasks_reset(100);
    counting_heap_reset();
    table_len = late_tasks = for_each_calls = walks = switch_during = 0;
    starts_running = rewaits = exits = false;
    fake_cpu_index = 0;
    fake_cpu_count = 2;
    fake_time_ns = NOW;
    fake_chain_hook = chain_hook;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < table_len; i++) {
        task_set_labels(table[i], NULL);
        task_set_span(table[i], 0);
    }
    assert_int_equal(live_allocations, 0);
    return 0;
}

/* A task in a blocking call: waiting on why since since_ms, its chain from the call's frame. */
static struct task *waiter(unsigned i, uint32_t pid, unsigned cpu, const char *name, enum task_wait why,
                           int64_t since_ms)
{
    struct task *t = add(i, pid, cpu, name, TASK_BLOCKED);
    t->waiting_on = (uint8_t)why;
    t->wait_since_ns = since_ms * MS;
    atomic_store(&t->wait_frame, (uintptr_t)0x7000);
    return t;
}

/* ---- the whole output ---------------------------------------------------------------------------------- */

static void test_every_kind_of_task(void **state)
{
    (void)state;
    struct task *idle0 = add(0, 1, 0, "idle", TASK_READY);
    idle0->is_idle = true;
    struct task *idle1 = add(1, 2, 1, "idle", TASK_RUNNING);
    idle1->is_idle = true;
    struct task *shell = add(2, 3, 0, "shell", TASK_RUNNING);
    fake_current = shell;
    struct task *net = waiter(3, 4, 0, "net", TASK_WAIT_NET, 3500);
    task_set_span(net, 9);
    struct task *burn = add(4, 5, 1, "burn", TASK_READY); /* preempted: no wait frame */
    const struct label_set *job = label_intern_one("job", "a", NULL);
    task_set_labels(burn, job);
    label_release(job);
    task_set_span(burn, 7);
    add(5, 6, 1, "done", TASK_DEAD);
    struct task *sleeper = add(6, 7, 0, "sleeper", TASK_SLEEPING);
    sleeper->waiting_on = TASK_WAIT_TIMER;
    sleeper->wait_since_ns = NOW - 20 * MS;
    sleeper->wake_at_ns = NOW + 100 * MS;
    atomic_store(&sleeper->wait_frame, (uintptr_t)0x7100);

    assert_int_equal(run("tasks"), 0);
    assert_string_equal(out,
        "task pid=1 cpu=0 name=idle idle=yes activity=runnable labels=-\n"
        "        at BurnInner+0x10\n"
        "        <- BurnTask+0x30\n"
        "task pid=2 cpu=1 name=idle idle=yes activity=running labels=-\n"
        "        (running on cpu 1)\n"
        "task pid=3 cpu=0 name=shell activity=running labels=-\n"
        "        (no frames)\n"
        "task pid=4 cpu=0 name=net activity=waiting wait=net wait_ms=1500 labels=span=9\n"
        "        <- BurnInner+0x10\n"
        "        <- BurnTask+0x30\n"
        "task pid=5 cpu=1 name=burn activity=runnable labels=job=a,span=7\n"
        "        at BurnInner+0x10\n"
        "        <- BurnTask+0x30\n"
        "task pid=7 cpu=0 name=sleeper activity=waiting wait=sleep wait_ms=20 labels=-\n"
        "        <- BurnInner+0x10\n"
        "        <- BurnTask+0x30\n");
    /* the running ones, the exited one and the caller itself are not walked */
    assert_int_equal(walks, 4);
}

static int far_chain(const struct task *task, uintptr_t *frames, int max)
{
    static const uintptr_t far[] = { 0x9000, FAKE_BURN_TASK + 0x8 };
    (void)task, (void)max;
    memcpy(frames, far, sizeof far);
    return 2;
}

/* A frame outside every symbol prints as its address; a chain of nothing says so. */
static void test_unresolved_frames_and_empty_chains(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    waiter(1, 2, 0, "far", TASK_WAIT_DEVICE, 4990);
    fake_chain_hook = NULL; /* no frames */
    assert_int_equal(run("tasks"), 0);
    assert_string_equal(out,
        "task pid=1 cpu=0 name=shell activity=running labels=-\n"
        "        (no frames)\n"
        "task pid=2 cpu=0 name=far activity=waiting wait=device wait_ms=10 labels=-\n"
        "        (no frames)\n");

    fake_chain_hook = far_chain;
    assert_int_equal(run("tasks"), 0);
    assert_non_null(strstr(out, "wait=device wait_ms=10 labels=-\n        <- 0x9000\n        <- BurnTask+0x8\n"));
}

/* ---- the second look ------------------------------------------------------------------------------------ */

static void test_a_task_switched_to_meanwhile_is_walked_again(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    waiter(1, 2, 1, "udpsh", TASK_WAIT_NET, 4000);
    switch_during = 1;
    assert_int_equal(run("tasks"), 0);
    assert_int_equal(walks, 2);
    assert_non_null(strstr(out, "task pid=2 cpu=1 name=udpsh activity=waiting wait=net wait_ms=1000 labels=-\n"
                                "        <- BurnInner+0x10\n        <- BurnTask+0x30\n"));
}

static void test_a_task_that_runs_during_every_walk_says_so(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    add(1, 2, 1, "busy", TASK_READY);
    switch_during = 100;
    assert_int_equal(run("tasks"), 0);
    assert_int_equal(walks, TRIES);
    assert_non_null(strstr(out, "task pid=2 cpu=1 name=busy activity=runnable labels=-\n"
                                "        (ran meanwhile)\n"));
    assert_null(strstr(out, "BurnInner"));
}

/* Running once walked: the frames may be anyone's, so the next look finds it on its CPU and says so. */
static void test_a_task_that_starts_running_during_the_walk_is_on_its_cpu(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    waiter(1, 2, 1, "net", TASK_WAIT_NET, 4000);
    starts_running = true;
    assert_int_equal(run("tasks"), 0);
    assert_int_equal(walks, 1);
    assert_non_null(strstr(out, "task pid=2 cpu=1 name=net activity=running labels=-\n"
                                "        (running on cpu 1)\n"));
    assert_null(strstr(out, "BurnInner"));
}

/* Woken before it slept, a task can leave one blocking call for the next without its CPU switching to it: the
 * wait frame moved, so the first walk is not trusted. */
static void test_a_task_that_left_its_wait_for_another_is_walked_again(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    waiter(1, 2, 1, "net", TASK_WAIT_NET, 4000);
    rewaits = true;
    assert_int_equal(run("tasks"), 0);
    assert_int_equal(walks, 2);
    assert_non_null(strstr(out, "name=net activity=waiting wait=net wait_ms=1000 labels=-\n"
                                "        <- BurnInner+0x10\n"));
}

/* Exited on its CPU while it was walked: gone from the dump, as a task that had exited before. */
static void test_a_task_that_exits_during_the_walk_is_left_out(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    waiter(1, 2, 1, "short", TASK_WAIT_NET, 4000);
    add(2, 3, 0, "after", TASK_READY);
    exits = true;
    assert_int_equal(run("tasks"), 0);
    assert_null(strstr(out, "name=short"));
    assert_non_null(strstr(out, "(no frames)\ntask pid=3 cpu=0 name=after activity=runnable labels=-\n"));
}

/* ---- what does not fit ----------------------------------------------------------------------------------- */

static void test_tasks_spawned_while_the_table_is_read_are_counted(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    late_tasks = 8 + 3; /* the rows' slack is 8 */
    for (unsigned i = 0; i < late_tasks; i++) {
        memset(&late[i], 0, sizeof late[i]);
        late[i].pid = 10 + i;
        strcpy(late[i].name, "new");
        atomic_store(&late[i].state, TASK_READY);
    }
    assert_int_equal(run("tasks"), 0);
    assert_non_null(strstr(out, "task pid=17 cpu=0 name=new activity=runnable labels=-\n"));
    assert_null(strstr(out, "pid=18 "));
    const char *last = "tasks: 3 more started while the table was read, not shown\n";
    assert_string_equal(out + strlen(out) - strlen(last), last);
}

static void test_no_memory_is_one_line(void **state)
{
    (void)state;
    fake_current = add(0, 1, 0, "shell", TASK_RUNNING);
    allocations_fail = true;
    assert_int_equal(run("tasks"), 1);
    assert_string_equal(out, "tasks: no memory for a copy of the task table\n");
    allocations_fail = false;
}

static void test_words_after_tasks_are_refused(void **state)
{
    (void)state;
    assert_int_equal(run("tasks 1"), 1);
    assert_string_equal(out, "usage: tasks\n");
    assert_int_equal(for_each_calls, 0);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL, test_every_kind_of_task, test_unresolved_frames_and_empty_chains,
               test_a_task_switched_to_meanwhile_is_walked_again, test_a_task_that_runs_during_every_walk_says_so,
               test_a_task_that_starts_running_during_the_walk_is_on_its_cpu,
               test_a_task_that_left_its_wait_for_another_is_walked_again,
               test_a_task_that_exits_during_the_walk_is_left_out,
               test_tasks_spawned_while_the_table_is_read_are_counted, test_no_memory_is_one_line,
               test_words_after_tasks_are_refused)
