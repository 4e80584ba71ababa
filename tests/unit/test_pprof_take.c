/* tests/unit/test_pprof_take.c: pprof_profile_take (kernel/profiler/pprof.c) over a real run on the fake CPUs:
 * the window of N seconds drained every PROFILE_DRAIN_MS with the caller's hook after each drain and no symbol
 * looked up until the stop, a body that is the profile (gzipped only when smaller) naming the sampled
 * functions and counting every sample; busy with the line saying what holds the profiler, cancelled by the
 * hook with no body, out of memory before and after the window -- each giving the profiler and the heap back;
 * a flame graph (pprof_flame_begin) whose SVG and kept pprof are of one fold, and its tag's parse.
 * Tasks, the sleep and the stack walk are the fake kernel's, as in test_cmd_profile.c
 * (profiler_burn_fixture.h); the heap is the kernel's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "fake_hal.h"
#include "profiler_burn_fixture.h"
#include "spawned_task.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/build_id.h"
#include "kernel/profiler/pprof.h"
#include "kernel/profiler/session.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "unit_main.h"

/* ---- fakes ---------------------------------------------------------------------------------------------- */

/* The image (BurnInner called from BurnTask), the tasks, the heap, the window's sleeps and the counted
 * lookups are profiler_burn_fixture.c's; every interrupted context has one caller, the first word of its
 * stack (the fake kernel's walk). */
const struct kernel_segment kernel_text_segment = { 0x100000, 0x1000, 0x1000 }; /* the link's, in the kernel */

void sched_cpu_ticks(unsigned cpu, uint64_t *ticks, uint64_t *busy)
{
    (void)cpu;
    *ticks = *busy = 0;
}

/* -1: kzalloc as the heap answers; n >= 0: n more, then refused. */
static int allocations_after = -1;
void *__real_kzalloc(size_t size);
void *__wrap_kzalloc(size_t size)
{
    if (allocations_after == 0)
        return NULL;
    if (allocations_after > 0)
        allocations_after--;
    return __real_kzalloc(size);
}

/* The window: each sleep moves the clock to its end, and each CPU takes burn_ticks_per_sleep ticks meanwhile;
 * the stop's wait for the CPUs to let go is the fake kernel's (a tick on each). fake_ticks counts them all. */
void task_sleep_until(int64_t when_ns)
{
    burn_window_sleep(when_ns);
    fake_time_ns = when_ns;
}

/* The caller's question before every sleep of the window, "is the client gone?": counts its calls, checks
 * nothing was looked up yet, and says gone at its cancel_at-th call (0: never). */
struct hook_state {
    int calls;
    int cancel_at;
};

static bool hook(void *arg)
{
    struct hook_state *h = arg;
    h->calls++;
    assert_int_equal(burn_lookups, 0);
    /* while the window runs, the session's holder names it for the others' busy lines */
    char holder[96];
    assert_true(profile_session_holder(holder, sizeof holder, NULL));
    assert_true(strncmp(holder, "an HTTP profile (/debug/pprof/profile), ", 40) == 0);
    return h->cancel_at && h->calls == h->cancel_at;
}

static struct pprof_profile profile;

static struct heap_stats baseline;

static int setup_group(void **state)
{
    (void)state;
    burn_heap_init(8 << 20);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    burn_setup(0); /* every CPU's task called from BurnTask+0x30 */
    allocations_after = -1;
    spawned_task_forget();
    spawned_task_name = "pprof";
    /* The rings stay allocated for the kernel's life: the baseline is taken after a run has made them. */
    burn_expect_profiler_free();
    label_reclaim();
    heap_get_stats(&baseline);
    return 0;
}

/* The profiler is free, and the heap holds what it held before the test. */
static void expect_all_given_back(void)
{
    burn_expect_profiler_free();
    label_reclaim();
    struct heap_stats now;
    heap_get_stats(&now);
    assert_int_equal(now.live_blocks, baseline.live_blocks);
    assert_int_equal(now.used_bytes, baseline.used_bytes);
}

/* The body, inflated when it is gzipped, into out (NUL-terminated for strstr over its strings). */
static size_t body_bytes(const struct pprof_body *body, char *out, size_t cap)
{
    if (!body->gzipped) {
        assert_true(body->len < cap);
        memcpy(out, body->data, body->len);
        out[body->len] = 0;
        return body->len;
    }
    assert_int_equal(body->data[0], 0x1f);
    uLongf n = (uLongf)cap - 1;
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    z.next_in = body->data;
    z.avail_in = (uInt)body->len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)n;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    n = z.total_out;
    inflateEnd(&z);
    assert_true(n > body->len); /* gzipped only when it was smaller */
    out[n] = 0;
    return n;
}

/* Whether needle is among the len bytes at hay. */
static bool contains(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(hay + i, needle, n) == 0)
            return true;
    return false;
}

/* ---- the tests ------------------------------------------------------------------------------------------ */

static char bytes[1 << 20];

static void test_a_profile_of_two_seconds(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 3;
    struct hook_state h = { 0, 0 };
    struct pprof_body body;
    char busy[80] = "untouched";
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 2, hook, &h, &body, busy, sizeof busy), PPROF_OK);
    assert_string_equal(busy, "");
    /* 2000 ms in steps of PROFILE_DRAIN_MS, the question before each, no lookup among them (the hook checks) */
    assert_int_equal(burn_sleeps, 2000 / PROFILE_DRAIN_MS);
    assert_int_equal(burn_slept_ms, 2000);
    assert_int_equal(h.calls, burn_sleeps);
    char holder[96];
    assert_false(profile_session_holder(holder, sizeof holder, NULL)); /* cleared at the release */
    assert_true(burn_lookups > 0); /* the encoder's, after the stop */
    assert_non_null(body.data);
    assert_true(body.gzipped); /* its labels, repeated per key, shrink */
    size_t n = body_bytes(&body, bytes, sizeof bytes);
    assert_true(contains(bytes, n, "BurnInner"));
    assert_true(contains(bytes, n, "BurnTask"));
    assert_true(contains(bytes, n, "kprof.elf"));
    assert_true(contains(bytes, n, "deadbeef"));
    /* Every tick of the window sampled (the stop's own ticks take none of this run's), every CPU counted. */
    char samples[96];
    snprintf(samples, sizeof samples, "source=tick period_ns=100000000 window_ms=2000 cpus=2 samples=%u dropped=0",
             (unsigned)(burn_sleeps * burn_ticks_per_sleep * fake_cpu_count));
    assert_true(contains(bytes, n, samples));
    assert_true(contains(bytes, n, "folded 6 keys of 4096")); /* 3 leaves x 2 CPUs */
    pprof_body_free(&body);
    assert_null(body.data);
    assert_int_equal(body.len, 0);
    expect_all_given_back();
}

static void test_seconds_clamped(void **state)
{
    (void)state;
    struct pprof_body body;
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 0, NULL, NULL, &body, NULL, 0), PPROF_OK);
    assert_int_equal(burn_slept_ms, 1000);
    pprof_body_free(&body);
    burn_slept_ms = 0;
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, PPROF_SECONDS_MAX + 1, NULL, NULL, &body, NULL, 0),
                     PPROF_OK);
    assert_int_equal(burn_slept_ms, PPROF_SECONDS_MAX * 1000);
    pprof_body_free(&body);
    expect_all_given_back();
}

static void ignore_record(void *arg, const struct profile_record *rec) { (void)arg, (void)rec; }

/* A run outside a session: plain busy. A session's: the one busy line, naming its holder. */
static void test_busy_says_what_holds_it(void **state)
{
    (void)state;
    struct profile_run held = { 0 };
    assert_int_equal(profiler_start(&held), PROFILER_OK);
    struct pprof_body body;
    char busy[128];
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 1, hook, NULL, &body, busy, sizeof busy), PPROF_BUSY);
    assert_string_equal(busy, "profile: busy");
    assert_null(body.data);
    assert_int_equal(body.len, 0);
    profiler_stop(&held);
    profiler_release();
    static const struct profile_consumer ignoring = { .take = ignore_record };
    struct profile_session stream;
    assert_int_equal(profile_session_start(&stream, &ignoring, NULL, NULL, 0,
                                           "streaming run 1f2e3d4c to 10.0.2.2:9999 (profile stream stop ends it)"),
                     PROFILER_OK);
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 1, hook, NULL, &body, busy, sizeof busy), PPROF_BUSY);
    assert_string_equal(busy, "profile: busy: streaming run 1f2e3d4c to 10.0.2.2:9999 (profile stream stop ends it)");
    /* no line asked for */
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 1, hook, NULL, &body, NULL, 0), PPROF_BUSY);
    assert_int_equal(burn_sleeps, 0);
    profiler_stop(&stream.run);
    profiler_release();
    expect_all_given_back();
}

/* In a task of its own: the caller goes on at once (nothing slept yet), the session holds the profiler under its
 * name, and the task's last act is done with the body. */
static int done_calls, done_status;
static struct pprof_body done_body;
static void done(struct pprof_profile *p, int status, struct pprof_body *body)
{
    assert_ptr_equal(p, &profile);
    assert_ptr_equal(p->arg, &done_calls);
    done_calls++;
    done_status = status;
    done_body = *body;
}

static void test_begin_runs_it_in_its_own_task(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 2;
    done_calls = 0;
    char busy[128] = "untouched";
    assert_int_equal(pprof_profile_begin(&profile, PPROF_CPU, 1, NULL, done, &done_calls, busy, sizeof busy), PPROF_OK);
    assert_string_equal(busy, "");
    assert_int_equal(burn_sleeps, 0);
    assert_int_equal(done_calls, 0);
    char holder[128];
    assert_true(profile_session_holder(holder, sizeof holder, NULL));
    assert_string_equal(holder, "an HTTP profile (/debug/pprof/profile), 1 s left");
    /* a second one meanwhile: busy, with the same line */
    struct pprof_profile second;
    assert_int_equal(pprof_profile_begin(&second, PPROF_CPU, 1, NULL, done, &done_calls, busy, sizeof busy),
                     PPROF_BUSY);
    assert_string_equal(busy, "profile: busy: an HTTP profile (/debug/pprof/profile), 1 s left");
    spawned_task_run(); /* pprof_profile_begin's task, here */
    assert_int_equal(done_calls, 1);
    assert_int_equal(done_status, PPROF_OK);
    assert_int_equal(burn_sleeps, 1000 / PROFILE_DRAIN_MS);
    assert_non_null(done_body.data);
    size_t n = body_bytes(&done_body, bytes, sizeof bytes);
    assert_true(contains(bytes, n, "BurnInner"));
    pprof_body_free(&done_body);
    expect_all_given_back();
}

static void test_hook_cancels(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 2;
    struct hook_state h = { 0, 3 };
    struct pprof_body body;
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 5, hook, &h, &body, NULL, 0), PPROF_CANCELLED);
    assert_int_equal(h.calls, 3);
    assert_int_equal(burn_sleeps, 2); /* asked before each sleep: the third question comes before a third */
    assert_null(body.data);
    assert_false(body.gzipped);
    assert_int_equal(burn_lookups, 0); /* nothing encoded */
    expect_all_given_back();
}

/* No room for the fold: nothing started. No room for the encoder's buffers after the window: no body, and
 * everything given back. gzip's scratch refused: the body goes uncompressed. */
static void test_out_of_memory(void **state)
{
    (void)state;
    struct pprof_body body;
    allocations_after = 0;
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 1, NULL, NULL, &body, NULL, 0), PPROF_NO_MEMORY);
    assert_int_equal(burn_sleeps, 0);
    assert_null(body.data);
    expect_all_given_back();
    burn_ticks_per_sleep = 1;
    allocations_after = 1; /* the fold only */
    assert_int_equal(pprof_profile_take(&profile, PPROF_CPU, 1, NULL, NULL, &body, NULL, 0), PPROF_NO_MEMORY);
    assert_int_equal(burn_sleeps, 1000 / PROFILE_DRAIN_MS);
    assert_null(body.data);
    allocations_after = -1;
    expect_all_given_back();
}

/* A flame graph is the same window: its SVG (done's body) and the pprof kept beside it are of one fold -- the same
 * samples -- and the filter the tag made keeps only what it names. */
static void test_a_flame_graph_and_its_pprof_are_one_fold(void **state)
{
    (void)state;
    burn_ticks_per_sleep = 2;
    done_calls = 0;
    struct pprof_flame_ask ask;
    memset(&ask, 0, sizeof ask);
    ask.run = 3;
    assert_int_equal(pprof_flame_begin(&profile, PPROF_CPU, 1, &ask, NULL, done, &done_calls, NULL, 0), PPROF_OK);
    char holder[128];
    assert_true(profile_session_holder(holder, sizeof holder, NULL));
    assert_string_equal(holder, "an HTTP flame graph (/debug/flamegraph), 1 s left");
    spawned_task_run();
    assert_int_equal(done_status, PPROF_OK);
    static char svg[1 << 16];
    assert_true(done_body.len < sizeof svg);
    memcpy(svg, done_body.data, done_body.len);
    svg[done_body.len] = 0;
    unsigned samples = (unsigned)(burn_sleeps * burn_ticks_per_sleep * fake_cpu_count);
    char fact[64];
    snprintf(fact, sizeof fact, "cpus=2 samples=%u dropped=0", samples);
    assert_non_null(strstr(svg, fact));
    assert_non_null(strstr(svg, "<title>BurnInner+0x"));
    assert_non_null(strstr(svg, "run=3 (its pprof: /debug/pprof/profile?run=3)"));
    snprintf(fact, sizeof fact, "data-n=\"%u\"><title>all (%u samples, 100.00%%)", samples, samples);
    assert_non_null(strstr(svg, fact));
    assert_non_null(profile.kept.data);
    size_t n = body_bytes(&profile.kept, bytes, sizeof bytes);
    snprintf(fact, sizeof fact, "window_ms=1000 cpus=2 samples=%u dropped=0", samples);
    assert_true(contains(bytes, n, fact));
    assert_true(contains(bytes, n, "BurnInner"));
    pprof_body_free(&done_body);
    pprof_body_free(&profile.kept);
    expect_all_given_back();

    /* tag=job:a, which no burning task carries: nothing of theirs in either */
    assert_true(pprof_flame_tag("job:a", &ask));
    assert_int_equal(pprof_flame_begin(&profile, PPROF_CPU, 1, &ask, NULL, done, &done_calls, NULL, 0), PPROF_OK);
    spawned_task_run();
    assert_int_equal(done_status, PPROF_OK);
    memcpy(svg, done_body.data, done_body.len);
    svg[done_body.len] = 0;
    assert_non_null(strstr(svg, "samples=0 dropped=0"));
    assert_non_null(strstr(svg, "tag=job=a run=3"));
    assert_null(strstr(svg, "BurnInner"));
    n = body_bytes(&profile.kept, bytes, sizeof bytes);
    assert_false(contains(bytes, n, "BurnInner"));
    pprof_body_free(&done_body);
    pprof_body_free(&profile.kept);
    expect_all_given_back();
}

/* The URL's key:value is the console's key=value: a label pair, or span:N; anything else refused, ask untouched. */
static void test_the_flame_tag_is_a_label_pair(void **state)
{
    (void)state;
    struct pprof_flame_ask ask;
    memset(&ask, 0, sizeof ask);
    assert_true(pprof_flame_tag("job:a", &ask));
    assert_true(ask.filter.by_label);
    assert_string_equal(ask.filter.label.key, "job");
    assert_string_equal(ask.filter.label.value, "a");
    assert_string_equal(ask.tag, "job=a");
    assert_true(pprof_flame_tag("span:42", &ask));
    assert_string_equal(ask.tag, "span=42");
    assert_true(pprof_flame_tag("url:/a:b", &ask)); /* the first ':' splits; a value may hold one */
    assert_string_equal(ask.filter.label.value, "/a:b");
    static const char *const bad[] = { "job", "job=a", ":a", "job:", "job:a b", "Job:a", "job:a,b",
                                       "averyveryverylongkey:a", "job:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
    memset(&ask, 0, sizeof ask);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(pprof_flame_tag(bad[i], &ask));
        assert_false(ask.filter.by_label);
        assert_string_equal(ask.tag, "");
    }
}

UNIT_MAIN_EACH(setup, NULL, setup_group, NULL,
               test_a_profile_of_two_seconds, test_seconds_clamped, test_busy_says_what_holds_it,
               test_begin_runs_it_in_its_own_task, test_hook_cancels, test_out_of_memory,
               test_a_flame_graph_and_its_pprof_are_one_fold, test_the_flame_tag_is_a_label_pair)
