/* kernel/profiler/session.c: a profiling session (kernel/profiler/session.h) -- one run's life from the claim to
 * the release, the same for every consumer, and the holder's line every busy answer shows. The holder is two
 * words and a text, written by the one task that holds the profiler (after its claim, cleared before its
 * release) and read by anyone a byte and a word at a time: a reader that races a change of holder may print a
 * line that mixes two, never one without its end. */
#include "kernel/profiler/session.h"

#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/labels.h"
#include "kernel/lib/format.h"
#include "kernel/profiler.h"
#include "kernel/profiler/build_id.h"
#include "kernel/task.h"

/* ---- the holder ------------------------------------------------------------------------------------ */

static char holder_text[PROFILE_HOLDER_MAX];
static int64_t holder_until_ns; /* the window's end (time_ns), 0 for a window without one */
static atomic_bool holder_set;

static void hold(const char *what, int64_t until_ns)
{
    size_t i = 0;
    for (; what[i] && i < sizeof holder_text - 1; i++)
        __atomic_store_n(&holder_text[i], what[i], __ATOMIC_RELAXED);
    __atomic_store_n(&holder_text[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&holder_until_ns, until_ns, __ATOMIC_RELAXED);
    atomic_store_explicit(&holder_set, true, memory_order_release);
}

static void unhold(void)
{
    atomic_store_explicit(&holder_set, false, memory_order_release);
}

bool profile_session_holder(char *buf, size_t cap, uint32_t *seconds_left)
{
    if (!atomic_load_explicit(&holder_set, memory_order_acquire))
        return false;
    char text[PROFILE_HOLDER_MAX];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = __atomic_load_n(&holder_text[i], __ATOMIC_RELAXED);
    text[sizeof text - 1] = 0;
    int64_t until = __atomic_load_n(&holder_until_ns, __ATOMIC_RELAXED);
    uint32_t left = 0;
    if (until) {
        int64_t ns = until - time_ns(); /* signed: one clock, compared as a difference */
        left = ns > 0 ? (uint32_t)((ns + 999999999) / 1000000000) : 0;
    }
    if (seconds_left)
        *seconds_left = left;
    if (until)
        ksnprintf(buf, cap, "%s, %u s left", text, left);
    else
        ksnprintf(buf, cap, "%s", text);
    return true;
}

void profile_session_busy_line(const char *who, char *buf, size_t cap)
{
    char holder[PROFILE_HOLDER_MAX + 24];
    if (profile_session_holder(holder, sizeof holder, 0))
        ksnprintf(buf, cap, "%s: busy: %s", who, holder);
    else
        ksnprintf(buf, cap, "%s: busy", who);
}

/* ---- the life ------------------------------------------------------------------------------------- */

int profile_session_start(struct profile_session *s, const struct profile_consumer *consumer, void *arg,
                          const struct profile_filter *filter, uint32_t window_ms, const char *holder)
{
    s->consumer = consumer;
    s->arg = arg;
    s->filter = filter ? *filter : (struct profile_filter){ .by_pid = false };
    s->window_ms = window_ms;
    s->drain_ns = 0;
    s->labels_dropped = 0;
    s->done = 0;
    struct label_stats labels;
    label_stats(&labels);
    s->labels_dropped_before = labels.dropped;
    s->run.wall = consumer->wall;
    int status = profiler_start(&s->run);
    if (status != PROFILER_OK)
        return status;
    hold(holder, window_ms ? s->run.start_ns + (int64_t)window_ms * 1000000 : 0);
    size_t note_len;
    const void *note = kernel_build_id_note(&note_len);
    if (!profile_build_id_hex(note, note_len, s->build_id, sizeof s->build_id))
        s->build_id[0] = 0;
    return PROFILER_OK;
}

/* Every record the rings hold now into the consumer, then its turn. */
static void drain(struct profile_session *s)
{
    s->drain_ns = time_ns();
    profiler_drain(&s->run, &s->filter, s->consumer->take, s->arg);
    if (s->consumer->after_drain)
        s->consumer->after_drain(s);
}

static bool window_should_stop(void *arg, bool window_over)
{
    struct profile_session *s = arg;
    return s->consumer->should_stop ? s->consumer->should_stop(s, window_over) : window_over;
}

static void window_step(void *arg)
{
    drain(arg);
}

void profile_session_run(struct profile_session *s)
{
    profiler_window(&s->run, s->window_ms, window_should_stop, window_step, s);
    profiler_stop(&s->run);
    if (s->consumer->stopped)
        s->consumer->stopped(s);
    drain(s);
    struct label_stats labels;
    label_stats(&labels);
    s->labels_dropped = labels.dropped - s->labels_dropped_before;
    if (s->consumer->finish)
        s->consumer->finish(s);
    unhold();
    profiler_release();
}

static void session_task(void *arg)
{
    struct profile_session *s = arg;
    profile_session_run(s);
    if (s->done)
        s->done(s);
    task_exit();
}

bool profile_session_spawn(struct profile_session *s, const char *name, void (*done)(struct profile_session *s))
{
    s->done = done;
    if (task_spawn(name, session_task, s, -1))
        return true;
    profiler_stop(&s->run);
    unhold();
    profiler_release();
    return false;
}
