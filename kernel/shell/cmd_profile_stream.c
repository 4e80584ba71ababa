/* kernel/shell/cmd_profile_stream.c: `profile stream` -- the command (start, stop, status) and the kernel task that
 * runs a stream: it holds the profiler for the stream's life, drains every CPU's ring every PROFILE_DRAIN_MS
 * and sends the samples as datagrams of kernel/profiler/stream_codec.h to one destination, with a heartbeat every
 * second and the end line at the close. One stream at a time; while it runs a one-shot `profile` says busy,
 * naming it (kernel/shell/cmd_profile.c): the rings have one consumer, and it is this task. */
#include <stdatomic.h>

#include "hal/cpu.h"
#include "hal/entropy.h"
#include "kernel/profiler/build_id.h"
#include "kernel/shell/commands.h"
#include "kernel/lib/format.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/udpsh/udpsh.h"
#include "kernel/profiler.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/lib/string.h"
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
    uint32_t seconds;
    struct profile_filter filter;
    int64_t started_ns, ended_ns;
    struct profile_run run;
    struct profile_streamer streamer;
    struct profile_stream_end end;
    bool ended;      /* a stream has run and ended: end holds its figures */
    /* the task's own cost: ticks that found it running, against its CPU's ticks, since it began */
    unsigned task_cpu;
    uint64_t task_ticks, cpu_ticks;
    bool bound;      /* PROFILE_STREAM_SRC_PORT is bound (once for the kernel's life) */
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

/* The share of its CPU the task took so far, as the tick sees it (each tick charges the task it finds). */
static void count_own_ticks(const struct task *self, uint64_t self_from, uint64_t cpu_from)
{
    uint64_t cpu_now, busy;
    sched_cpu_ticks(self->cpu, &cpu_now, &busy);
    __atomic_store_n(&stream.task_ticks, self->ticks - self_from, __ATOMIC_RELAXED);
    __atomic_store_n(&stream.cpu_ticks, cpu_now - cpu_from, __ATOMIC_RELAXED);
}

static void stream_task(void *arg)
{
    (void)arg;
    struct profile_streamer *s = &stream.streamer;
    struct task *self = task_current();
    uint64_t self_from = self->ticks, cpu_from, busy;
    sched_cpu_ticks(self->cpu, &cpu_from, &busy);
    stream.task_cpu = self->cpu;
    int64_t end = stream.started_ns + (int64_t)stream.seconds * 1000000000;
    enum profile_stream_reason reason = PROFILE_STREAM_STOPPED;
    for (;;) {
        if (atomic_load(&stream.stop_asked))
            break;
        int64_t now = time_ns();
        if (stream.seconds && now - end >= 0) {
            reason = PROFILE_STREAM_TIME;
            break;
        }
        if (!net_available()) {
            reason = PROFILE_STREAM_ERROR;
            break;
        }
        int64_t next = now + (int64_t)PROFILE_DRAIN_MS * 1000000;
        task_sleep_until(stream.seconds && next - end > 0 ? end : next);
        now = time_ns();
        profile_streamer_drain(s, &stream.run, &stream.filter, now);
        profile_streamer_heartbeat(s, now);
        count_own_ticks(self, self_from, cpu_from);
    }
    profiler_stop(&stream.run);
    int64_t now = time_ns();
    profile_streamer_drain(s, &stream.run, &stream.filter, now);
    profile_streamer_finish(s, reason, now, &stream.end);
    count_own_ticks(self, self_from, cpu_from);
    stream.ended_ns = now;
    profiler_release();
    stream.ended = true;
    atomic_store(&stream.state, STREAM_IDLE);
    task_exit();
}

static void print_address(struct sink *out, uint32_t ip, uint16_t port)
{
    sink_printf(out, "%s:%u", ipv4_text(ip).s, port);
}

bool profile_stream_describe(char *buf, size_t cap)
{
    if (atomic_load(&stream.state) != STREAM_RUNNING)
        return false;
    uint32_t ip = stream.dst_ip;
    ksnprintf(buf, cap, "streaming run %08x to %s:%u", stream.streamer.fixed.run, ipv4_text(ip).s, stream.dst_port);
    return true;
}

static struct profile_stream_origin request_origin(void)
{
    struct profile_stream_origin o = { false, false, 0 };
    o.udp = udpsh_request_origin(&o.ip, &o.keyed);
    return o;
}

static int start_stream(const struct profile_stream_request *req, struct sink *out)
{
    struct profile_stream_origin origin = request_origin();
    uint32_t dst;
    const char *refusal = profile_stream_destination(req, &origin, net_peer_permitted, &dst);
    if (refusal) {
        sink_printf(out, "%s\n", refusal);
        return 1;
    }
    if (!net_available()) {
        sink_puts(out, "profile stream: no network interface\n");
        return 1;
    }
    if (req->filter.by_pid && !task_exists(req->filter.pid)) {
        sink_printf(out, "profile stream: no task with pid %u\n", req->filter.pid);
        return 1;
    }
    int idle = STREAM_IDLE;
    if (!atomic_compare_exchange_strong(&stream.state, &idle, STREAM_STARTING)) {
        char what[64];
        if (profile_stream_describe(what, sizeof what))
            sink_printf(out, "profile stream: busy (%s; profile stream stop ends it)\n", what);
        else
            sink_puts(out, "profile stream: busy (a stream is starting or stopping)\n");
        return 1;
    }
    if (!stream.bound && !(stream.bound = net_udp_bind(PROFILE_STREAM_SRC_PORT, ignore_datagram, 0))) {
        atomic_store(&stream.state, STREAM_IDLE);
        sink_printf(out, "profile stream: cannot bind UDP port %u (too many ports)\n", PROFILE_STREAM_SRC_PORT);
        return 1;
    }
    int status = profiler_start(&stream.run);
    if (status != PROFILER_OK) {
        atomic_store(&stream.state, STREAM_IDLE);
        sink_puts(out, status == PROFILER_BUSY ? "profile stream: busy (a profile is running)\n"
                                               : "profile stream: out of memory\n");
        return 1;
    }
    stream.dst_ip = dst;
    stream.dst_port = req->port;
    stream.seconds = req->seconds;
    stream.filter = req->filter;
    stream.started_ns = stream.run.start_ns;
    stream.task_ticks = stream.cpu_ticks = 0;
    atomic_store(&stream.stop_asked, false);

    char build_id[2 * PROFILE_BUILD_ID_MAX + 1];
    size_t note_len;
    const void *note = kernel_build_id_note(&note_len);
    if (!profile_build_id_hex(note, note_len, build_id, sizeof build_id))
        build_id[0] = 0;
    bool hardware;
    uint32_t run_id = (uint32_t)(entropy_sample(&hardware) ^ (uint64_t)time_ns());
    profile_streamer_init(&stream.streamer, run_id, &stream.run, build_id, send_to_destination, 0, time_ns());

    atomic_store(&stream.state, STREAM_RUNNING);
    if (!task_spawn("pstream", stream_task, 0, -1)) {
        profiler_stop(&stream.run);
        profiler_release();
        atomic_store(&stream.state, STREAM_IDLE);
        sink_puts(out, "profile stream: out of memory (no task)\n");
        return 1;
    }
    sink_printf(out, "profile stream: run %08x to ", run_id);
    print_address(out, dst, req->port);
    if (req->seconds)
        sink_printf(out, " for %u s", req->seconds);
    else
        sink_puts(out, " until profile stream stop");
    if (req->filter.by_pid)
        sink_printf(out, ", pid %u", req->filter.pid);
    sink_printf(out, ", source %s\n", stream.streamer.fixed.source);
    return 0;
}

/* "run 1f2e3d4c to 10.0.2.2:9000, 12.3 s, 4010 samples/s, sent 49213, ring dropped 0, unsent 0, 5470 datagrams,
 * task 1.2% of cpu 3" */
static void print_figures(struct sink *out, int64_t until_ns)
{
    const struct profile_streamer *s = &stream.streamer;
    uint64_t drained = read_word(&s->drained), sent = read_word(&s->sent), unsent = read_word(&s->unsent);
    uint64_t dropped = read_word(&s->ring_dropped), datagrams = read_word(&s->datagrams);
    uint64_t ms = until_ns > stream.started_ns ? (uint64_t)(until_ns - stream.started_ns) / 1000000 : 0;
    sink_printf(out, "run %08x to ", s->fixed.run);
    print_address(out, stream.dst_ip, stream.dst_port);
    sink_printf(out, ", %llu.%llu s, %llu samples/s, sent %llu, ring dropped %llu, unsent %llu, %llu datagrams",
                (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 100),
                (unsigned long long)(ms ? drained * 1000 / ms : 0), (unsigned long long)sent,
                (unsigned long long)dropped, (unsigned long long)unsent, (unsigned long long)datagrams);
    uint64_t own = read_word(&stream.task_ticks), of = read_word(&stream.cpu_ticks);
    uint64_t tenths = of ? (own * 1000 + of / 2) / of : 0;
    sink_printf(out, ", task %llu.%llu%% of cpu %u", (unsigned long long)(tenths / 10),
                (unsigned long long)(tenths % 10), stream.task_cpu);
}

static int stop_stream(struct sink *out)
{
    if (atomic_load(&stream.state) != STREAM_RUNNING) {
        sink_puts(out, "profile stream: not streaming\n");
        return 1;
    }
    struct profile_stream_origin origin = request_origin();
    if (!profile_stream_may_stop(&origin, stream.dst_ip)) {
        sink_puts(out, "profile stream: an unkeyed request may stop only a stream to its own address\n");
        return 1;
    }
    atomic_store(&stream.stop_asked, true);
    while (atomic_load(&stream.state) == STREAM_RUNNING)
        task_sleep_ms(10);
    sink_puts(out, "profile stream: stopped: ");
    print_figures(out, stream.ended_ns);
    sink_printf(out, ", produced %llu\n", (unsigned long long)stream.end.produced);
    return 0;
}

static int print_status(struct sink *out)
{
    int state = atomic_load(&stream.state);
    if (state == STREAM_RUNNING) {
        sink_puts(out, "profile stream: ");
        print_figures(out, time_ns());
        sink_puts(out, "\n");
    } else if (stream.ended) {
        sink_puts(out, "profile stream: idle; last ");
        print_figures(out, stream.ended_ns);
        sink_printf(out, ", produced %llu, ended: %s\n", (unsigned long long)stream.end.produced,
                    profile_stream_reason_word(stream.end.reason));
    } else {
        sink_puts(out, "profile stream: idle\n");
    }
    return 0;
}

int cmd_profile_stream(int argc, char **argv, struct sink *out)
{
    struct profile_stream_request req;
    if (!profile_stream_parse_args(argc, argv, &req)) {
        sink_puts(out, "usage: " PROFILE_STREAM_USAGE "\n");
        return 1;
    }
    switch (req.action) {
    case PROFILE_STREAM_STATUS:
        return print_status(out);
    case PROFILE_STREAM_STOP:
        return stop_stream(out);
    case PROFILE_STREAM_START:
        return start_stream(&req, out);
    }
    return 1;
}
