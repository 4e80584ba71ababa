/* tests/unit/test_goroutine.c: the goroutine profile (kernel/profiler/goroutine.c) over task dumps of the test's
 * own and a small image -- tasks grouped by chain, state, wait, name and labels (one group per kind, counted),
 * most tasks first; as pprof (read back by tests/unit/pprof_reader.h): goroutine/count, period 1, the kernel's
 * mapping, a preempted task's pc as a leaf and every other frame as a return address, a chainless task on a
 * location named for why, labels sorted by key; as Go's debug=1 text, line for line; and every allocation refused
 * in turn handled with nothing leaked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "counting_heap.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler/goroutine.h"
#include "pprof_reader.h"
#include "unit_main.h"
#include "wait_serve_image.h"

/* The image (tests/unit/wait_serve_image.h): Wait, Serve (which calls Wait) and Loop. */
static const struct pprof_mapping mapping = { 0x1000, 0x2000, 0x3000, "feedc0de" };

static struct task_dump_row rows[16];
static struct task_dump dump = { rows, 0, 0 };

static struct task_dump_row *add(uint32_t pid, const char *name, uint8_t activity, uint8_t wait, uint8_t chain,
                                 const char *labels, unsigned n, const uintptr_t *frames)
{
    struct task_dump_row *r = &rows[dump.count++];
    memset(r, 0, sizeof *r);
    r->pid = pid;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->activity = activity;
    r->waiting_on = wait;
    r->chain = chain;
    snprintf(r->labels, sizeof r->labels, "%s", labels);
    r->nframes = (uint8_t)n;
    if (n)
        memcpy(r->frames, frames, n * sizeof *frames);
    return r;
}

#define F(...) (sizeof((const uintptr_t[]){ __VA_ARGS__ }) / sizeof(uintptr_t)), (const uintptr_t[]){ __VA_ARGS__ }

/* Three work tasks waiting alike, a fourth in another span; the shell waiting on input; a preempted task; one
 * running on another CPU; one its CPU ran during every walk. */
static void a_machine(void)
{
    dump.count = dump.missed = 0;
    add(3, "shell", TASK_ACT_WAITING, TASK_WAIT_INPUT, TASK_CHAIN_CALLERS, "-", F(LOOP + 0x20));
    for (uint32_t pid = 7; pid < 10; pid++)
        add(pid, "work", TASK_ACT_WAITING, TASK_WAIT_TIMER, TASK_CHAIN_CALLERS, "work=serve,span=5",
            F(WAIT + 0x2a, SERVE + 0x61, LOOP + 0x14));
    add(10, "work", TASK_ACT_WAITING, TASK_WAIT_TIMER, TASK_CHAIN_CALLERS, "work=serve,span=6",
        F(WAIT + 0x2a, SERVE + 0x61, LOOP + 0x14));
    add(11, "burn", TASK_ACT_RUNNABLE, TASK_WAIT_NONE, TASK_CHAIN_INTERRUPTED, "job=a", F(SERVE, LOOP + 0x8));
    add(12, "burn", TASK_ACT_RUNNING, TASK_WAIT_NONE, TASK_CHAIN_ON_CPU, "-", 0, NULL);
    add(13, "net", TASK_ACT_RUNNABLE, TASK_WAIT_NET, TASK_CHAIN_RAN_MEANWHILE, "-", 0, NULL);
}

static int setup(void **state)
{
    (void)state;
    counting_heap_reset();
    return 0;
}

static struct profile_read profile;

static bool encode_dump(const void *d, uint8_t **data, size_t *len)
{
    return goroutine_encode(d, &tab, &mapping, data, len);
}

static void test_pprof_counts_tasks_by_chain(void **state)
{
    (void)state;
    a_machine();
    uint8_t *data;
    size_t len;
    assert_true(encode_dump(&dump, &data, &len));
    pprof_read(data, len, &profile);
    kfree(data);
    const struct profile_read *r = &profile;
    assert_int_equal(r->ntypes, 1);
    assert_string_equal(pprof_str(r, r->types[0][0]), "goroutine");
    assert_string_equal(pprof_str(r, r->types[0][1]), "count");
    assert_string_equal(pprof_str(r, r->period_type[0]), "goroutine");
    assert_int_equal(r->period, 1);
    assert_string_equal(pprof_str(r, r->default_type), "goroutine");
    assert_int_equal(r->mapping[2], 0x1000);
    assert_int_equal(r->mapping[4], 0x3000);
    assert_string_equal(pprof_str(r, r->mapping[6]), "feedc0de");
    assert_int_equal(r->ncomments, 2);
    assert_string_equal(pprof_str(r, r->comments[0]),
                        "kprof kernel: tasks=8 (every live task at one moment, counted by chain, state, name and "
                        "labels), missed=0 (started while the table was read)");

    /* most tasks first, then in dump order */
    assert_int_equal(r->nsamples, 6);
    char text[512];
    const struct sample_read *s = &r->samples[0];
    assert_int_equal(s->nvalues, 1);
    assert_int_equal(s->values[0], 3);
    assert_int_equal(s->nlocs, 3);
    assert_string_equal(pprof_functions_of(r, s, text, sizeof text), "Wait <- Serve <- Loop");
    assert_int_equal(pprof_location_of(r, s->locs[0])->address, WAIT + 0x2a);
    assert_int_equal(pprof_location_of(r, s->locs[0])->mapping, 1);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text),
                        "span=5 state=waiting task=work waiting_on=sleep work=serve");

    s = &r->samples[1];
    assert_int_equal(s->values[0], 1);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "state=waiting task=shell waiting_on=input");
    s = &r->samples[2];
    assert_int_equal(s->values[0], 1);
    assert_int_equal(s->locs[0], r->samples[0].locs[0]); /* one chain, another span: the same locations */
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text),
                        "span=6 state=waiting task=work waiting_on=sleep work=serve");

    /* the preempted task's pc is a leaf: Serve at its first byte, where a return address would be Wait's */
    s = &r->samples[3];
    assert_string_equal(pprof_functions_of(r, s, text, sizeof text), "Serve <- Loop");
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "job=a state=runnable task=burn");

    s = &r->samples[4];
    assert_int_equal(s->nlocs, 1);
    assert_string_equal(pprof_function_of(r, s->locs[0]), GOROUTINE_ON_CPU);
    assert_int_equal(pprof_location_of(r, s->locs[0])->mapping, 0);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "state=running task=burn");
    s = &r->samples[5];
    assert_string_equal(pprof_function_of(r, s->locs[0]), GOROUTINE_RAN_MEANWHILE);
    assert_string_equal(pprof_labels_of(r, s, text, sizeof text), "state=runnable task=net"); /* no wait: runnable */

    uint64_t tasks = 0;
    for (unsigned i = 0; i < r->nsamples; i++)
        tasks += r->samples[i].values[0];
    assert_int_equal(tasks, dump.count);
    assert_int_equal(live_allocations, 0);
}

static void test_debug_1_is_gos_text(void **state)
{
    (void)state;
    a_machine();
    dump.missed = 2;
    char buf[4096];
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, sizeof buf);
    assert_true(goroutine_text(&bs.sink, &dump, &tab));
    assert_string_equal(buf,
        "goroutine profile: total 8\n"
        "3 @ 0x102a 0x1161 0x1214\n"
        "# labels: {\"span\":\"5\", \"state\":\"waiting\", \"task\":\"work\", \"waiting_on\":\"sleep\", "
        "\"work\":\"serve\"}\n"
        "#\t0x102a\tWait+0x2a\n"
        "#\t0x1161\tServe+0x61\n"
        "#\t0x1214\tLoop+0x14\n"
        "\n"
        "1 @ 0x1220\n"
        "# labels: {\"state\":\"waiting\", \"task\":\"shell\", \"waiting_on\":\"input\"}\n"
        "#\t0x1220\tLoop+0x20\n"
        "\n"
        "1 @ 0x102a 0x1161 0x1214\n"
        "# labels: {\"span\":\"6\", \"state\":\"waiting\", \"task\":\"work\", \"waiting_on\":\"sleep\", "
        "\"work\":\"serve\"}\n"
        "#\t0x102a\tWait+0x2a\n"
        "#\t0x1161\tServe+0x61\n"
        "#\t0x1214\tLoop+0x14\n"
        "\n"
        "1 @ 0x1100 0x1208\n"
        "# labels: {\"job\":\"a\", \"state\":\"runnable\", \"task\":\"burn\"}\n"
        "#\t0x1100\tServe+0\n"
        "#\t0x1208\tLoop+0x8\n"
        "\n"
        "1 @\n"
        "# labels: {\"state\":\"running\", \"task\":\"burn\"}\n"
        "#\t[running on another cpu]\n"
        "\n"
        "1 @\n"
        "# labels: {\"state\":\"runnable\", \"task\":\"net\"}\n"
        "#\t[ran meanwhile]\n"
        "\n"
        "# 2 more tasks started while the table was read, not counted\n");
    assert_int_equal(live_allocations, 0);
}

/* Every allocation refused in turn: false and nothing handed over or leaked, until it succeeds. */
static void test_out_of_memory_at_every_step(void **state)
{
    (void)state;
    a_machine();
    assert_int_equal(live_allocations, 0);
    counting_heap_first_success(encode_dump, &dump, 32);
    char buf[64];
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, sizeof buf);
    allocations_after = 0;
    assert_false(goroutine_text(&bs.sink, &dump, &tab));
    allocations_after = -1;
    assert_int_equal(bs.len, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_pprof_counts_tasks_by_chain, test_debug_1_is_gos_text, test_out_of_memory_at_every_step)
