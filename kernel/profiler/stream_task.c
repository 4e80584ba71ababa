/* kernel/profiler/stream_task.c: the running stream (kernel/profiler/stream_task.h) -- the one stream's state
 * and the kernel task that runs it: it holds the profiler for the stream's life, drains every CPU's ring in
 * the window of kernel/profiler/run.h (every PROFILE_DRAIN_MS) into the packer of
 * kernel/profiler/stream_codec.h and sends the datagrams to one destination, with a heartbeat every second and
 * the end line at the close. One stream at a time; while it runs a one-shot `profile` says busy, naming it:
 * the rings have one consumer, and it is this task. The `profile stream` command is
 * kernel/shell/cmd_profile_stream.c. */
#include "kernel/profiler/stream_task.h"

#include <stdatomic.h>

#include "hal/cpu.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/log.h"
#include "kernel/net/boot_secret.h"
#include "kernel/net/net.h"
#include "kernel/profiler.h"
#include "kernel/profiler/session.h"
#include "kernel/profiler/stream_packer.h"
#include "kernel/task.h"

_Static_assert(PROFILE_STREAM_DATAGRAM_MAX == NET_UDP_MAX, "a stream datagram is one unfragmented UDP payload");

enum stream_state {
    STREAM_IDLE,     /* no stream; the last one's figures stay for the status line */
    STREAM_STARTING, /* claimed by a start that has not finished */
    STREAM_RUNNING,  /* the task runs it */
};

/* The one stream. state is the claim; the rest is written by the start before the task runs, then by the task
 * alone (the status line reads its figures a word at a time). */
static struct {
    _Atomic int state;
    atomic_bool stop_asked;
    uint32_t dst_ip;
    uint16_t dst_port;
    int64_t started_ns, ended_ns;
    struct profile_session session;
    struct profile_streamer streamer;
    struct profile_stream_end end;
    enum profile_stream_reason reason; /* why its window ended */
    bool stopped;    /* the run has stopped: the last drain is under way */
    bool ended;      /* a stream has run and ended: end holds its figures */
    /* the task's own cost: ticks that found it running, against its CPU's ticks, since it began */
    const struct task *self;
    uint64_t self_from, cpu_from;
    unsigned task_cpu;
    uint64_t task_ticks, cpu_ticks;
    bool bound;      /* PROFILE_STREAM_SRC_PORT is bound (once for the kernel's life) */
    uint32_t slow_ms; /* profile.stream_slow_ms=: a deliberate delay before each drain's packing (tests) */
    uint64_t slowed;  /* drains delayed so */
} stream;

/* Datagrams to the stream's port are not for us; the binding exists so lwIP has a pcb to send from. */
static void ignore_datagram(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *data, size_t len)
{
    (void)arg, (void)src_ip, (void)src_port, (void)data, (void)len;
}

/* Waits while the network task's queue is half full (the task waits, and the rings fill meanwhile; the other
 * half stays for the UDP shell's answers): a failure is a network gone. */
static bool send_to_destination(void *arg, const char *data, size_t len)
{
    (void)arg;
    return net_udp_send(NET_UDP_WAIT_SHARED, PROFILE_STREAM_SRC_PORT, stream.dst_ip, stream.dst_port, data, len);
}

static uint64_t read_word(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* ---- the stream's consumer (its session's task) --------------------------------------------------- */

/* The share of its CPU the task took so far, as the tick sees it (each tick charges the task it finds). */
static void count_own_ticks(void)
{
    uint64_t cpu_now, busy;
    sched_cpu_ticks(stream.self->cpu, &cpu_now, &busy);
    __atomic_store_n(&stream.task_ticks, stream.self->ticks - stream.self_from, __ATOMIC_RELAXED);
    __atomic_store_n(&stream.cpu_ticks, cpu_now - stream.cpu_from, __ATOMIC_RELAXED);
}

/* Each wanted record into the datagram being packed, stamped with its drain's clock. */
static void take(void *arg, const struct profile_record *rec)
{
    (void)arg;
    profile_streamer_add(&stream.streamer, rec, stream.session.drain_ns);
}

/* After every drain: what it packed goes out, a heartbeat if nothing did for a second; then the deliberate
 * delay of profile.stream_slow_ms= (the rings keep recording meanwhile). */
static void after_drain(struct profile_session *s)
{
    stream.streamer.ring_dropped = profiler_drops(&s->run);
    profile_streamer_flush(&stream.streamer, s->drain_ns);
    profile_streamer_heartbeat(&stream.streamer, time_ns());
    count_own_ticks();
    if (stream.slow_ms && !stream.stopped) {
        task_sleep_ms(stream.slow_ms);
        __atomic_store_n(&stream.slowed, stream.slowed + 1, __ATOMIC_RELAXED);
    }
}

/* Before every sleep, in this order: a stop asked for, the stream's time run out, the network gone. The first
 * call is the task's first step: its own account starts here. */
static bool should_stop(struct profile_session *s, bool window_over)
{
    (void)s;
    if (!stream.self) {
        uint64_t busy;
        stream.self = task_current();
        stream.self_from = stream.self->ticks;
        sched_cpu_ticks(stream.self->cpu, &stream.cpu_from, &busy);
        stream.task_cpu = stream.self->cpu;
    }
    if (atomic_load(&stream.stop_asked)) {
        stream.reason = PROFILE_STREAM_STOPPED;
        return true;
    }
    if (window_over) {
        stream.reason = PROFILE_STREAM_TIME;
        return true;
    }
    if (!net_available()) {
        stream.reason = PROFILE_STREAM_ERROR;
        return true;
    }
    return false;
}

static void stopped(struct profile_session *s)
{
    (void)s;
    stream.stopped = true; /* the last drain is not slowed */
}

/* The last drain sent: the end line, while the stream still holds the profiler. */
static void finish(struct profile_session *s)
{
    int64_t now = time_ns();
    profile_streamer_finish(&stream.streamer, stream.reason, now, &stream.end);
    count_own_ticks();
    stream.ended_ns = now;
    (void)s;
}

/* The profiler given back: the stream is over, and a new one may start. */
static void done(struct profile_session *s)
{
    (void)s;
    stream.ended = true;
    atomic_store(&stream.state, STREAM_IDLE);
}

static const struct profile_consumer stream_consumer = {
    .take = take,
    .after_drain = after_drain,
    .should_stop = should_stop,
    .stopped = stopped,
    .finish = finish,
};

/* The same, of a wall run: its samples are tasks, each line's context word its state. */
static const struct profile_consumer stream_wall_consumer = {
    .take = take,
    .after_drain = after_drain,
    .should_stop = should_stop,
    .stopped = stopped,
    .finish = finish,
    .wall = true,
};

/* ---- what the command asks --------------------------------------------------------------------------- */

void profile_stream_set_slow(const char *slow_ms_option)
{
    uint64_t ms;
    if (!slow_ms_option)
        return;
    if (!parse_u64_range(slow_ms_option, 0, PROFILE_STREAM_SLOW_MS_MAX, &ms)) {
        log_warn("profile: profile.stream_slow_ms=%s is not 0..%u ms; the stream is not slowed", slow_ms_option,
                 PROFILE_STREAM_SLOW_MS_MAX);
        return;
    }
    stream.slow_ms = (uint32_t)ms;
    log_info("profile: the stream's task waits %u ms before each drain (profile.stream_slow_ms=, a test knob)",
             stream.slow_ms);
}

enum profile_stream_start_status profile_stream_start(uint32_t dst_ip, uint16_t dst_port, uint32_t seconds,
                                                      const struct profile_filter *filter, bool wall,
                                                      uint32_t *run_id)
{
    int idle = STREAM_IDLE;
    if (!atomic_compare_exchange_strong(&stream.state, &idle, STREAM_STARTING))
        return PROFILE_STREAM_BUSY;
    if (!stream.bound && !(stream.bound = net_udp_bind(PROFILE_STREAM_SRC_PORT, ignore_datagram, 0))) {
        atomic_store(&stream.state, STREAM_IDLE);
        return PROFILE_STREAM_NO_PORT;
    }
    *run_id = boot_secret_run_id(); /* no clock bits in it: kernel/net/entropy_pool.h */
    char holder[PROFILE_HOLDER_MAX];
    ksnprintf(holder, sizeof holder, "streaming%s run %08x to %s:%u (profile stream stop ends it)",
              wall ? " wall" : "", *run_id, ipv4_text(dst_ip).s, dst_port);
    int status = profile_session_start(&stream.session, wall ? &stream_wall_consumer : &stream_consumer, &stream,
                                       filter, seconds * 1000, holder);
    if (status != PROFILER_OK) {
        atomic_store(&stream.state, STREAM_IDLE);
        return status == PROFILER_BUSY ? PROFILE_STREAM_PROFILER_BUSY : PROFILE_STREAM_NO_MEMORY;
    }
    stream.dst_ip = dst_ip;
    stream.dst_port = dst_port;
    stream.started_ns = stream.session.run.start_ns;
    stream.task_ticks = stream.cpu_ticks = 0;
    stream.slowed = 0;
    stream.self = 0;
    stream.stopped = false;
    stream.reason = PROFILE_STREAM_STOPPED;
    atomic_store(&stream.stop_asked, false);
    profile_streamer_init(&stream.streamer, *run_id, &stream.session.run, stream.session.build_id,
                          send_to_destination, 0, time_ns());

    atomic_store(&stream.state, STREAM_RUNNING);
    if (!profile_session_spawn(&stream.session, "pstream", done)) {
        atomic_store(&stream.state, STREAM_IDLE);
        return PROFILE_STREAM_NO_TASK;
    }
    return PROFILE_STREAM_STARTED;
}

void profile_stream_stop(void)
{
    atomic_store(&stream.stop_asked, true);
    while (atomic_load(&stream.state) == STREAM_RUNNING)
        task_sleep_ms(10);
}

void profile_stream_figures(struct profile_stream_figures *f)
{
    const struct profile_streamer *s = &stream.streamer;
    f->running = atomic_load(&stream.state) == STREAM_RUNNING;
    f->ended = stream.ended;
    f->run = s->fixed.run;
    f->source = s->fixed.source;
    f->dst_ip = stream.dst_ip;
    f->dst_port = stream.dst_port;
    f->started_ns = stream.started_ns;
    f->ended_ns = stream.ended_ns;
    f->drained = read_word(&s->drained);
    f->sent = read_word(&s->sent);
    f->unsent = read_word(&s->unsent);
    f->ring_dropped = read_word(&s->ring_dropped);
    f->datagrams = read_word(&s->datagrams);
    f->task_cpu = stream.task_cpu;
    f->task_ticks = read_word(&stream.task_ticks);
    f->cpu_ticks = read_word(&stream.cpu_ticks);
    f->slow_ms = stream.slow_ms;
    f->slowed = read_word(&stream.slowed);
    f->produced = stream.end.produced;
    f->reason = stream.end.reason;
}
