/* kernel/shell/cmd_profile_stream.c: the `profile stream` command -- its words parsed
 * (kernel/profiler/stream_codec.c), where a stream may go and who may stop it checked, a stream started,
 * stopped or its status printed. The stream itself, its task and its figures, is kernel/profiler/stream_task.c;
 * while it runs every other start says busy, naming it (the session's holder: kernel/profiler/session.h). */
#include "hal/cpu.h"
#include "kernel/shell/commands.h"
#include "kernel/lib/format.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/profiler/session.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/profiler/stream_packer.h"
#include "kernel/profiler/stream_request.h"
#include "kernel/profiler/stream_task.h"
#include "kernel/task.h"

static void print_address(struct sink *out, uint32_t ip, uint16_t port)
{
    sink_printf(out, "%s:%u", ipv4_text(ip).s, port);
}

/* Where the request came from, as the stream's rules (kernel/profiler/stream_codec.h) take it. */
static struct profile_stream_origin request_origin(const struct shell_origin *from)
{
    struct profile_stream_origin o = { from->udp, from->keyed, from->ip };
    return o;
}

/* An unkeyed UDP request's stream (only ever to the requester itself) ends, at the latest, when the token that
 * allowed it expires: the token is a bearer token good for 30-60 s, and what it allowed should not outlive it. */
static uint32_t token_bounded_seconds(uint32_t seconds, const struct shell_origin *from)
{
    if (!from->udp || !from->until_ns)
        return seconds;
    int64_t left = from->until_ns - time_ns();
    uint32_t most = left > 1000000000 ? (uint32_t)(left / 1000000000) : 1;
    return seconds && seconds <= most ? seconds : most;
}

static int start_stream(const struct profile_stream_request *req, const struct shell_origin *from, struct sink *out)
{
    struct profile_stream_origin origin = request_origin(from);
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
    uint32_t seconds = token_bounded_seconds(req->seconds, from);
    uint32_t run_id;
    switch (profile_stream_start(dst, req->port, seconds, &req->filter, req->wall, &run_id)) {
    case PROFILE_STREAM_STARTED:
        break;
    case PROFILE_STREAM_BUSY:
    case PROFILE_STREAM_PROFILER_BUSY: {
        char line[PROFILE_HOLDER_MAX + 40];
        profile_session_busy_line("profile stream", line, sizeof line);
        sink_printf(out, "%s\n", line);
        return 1;
    }
    case PROFILE_STREAM_NO_PORT:
        sink_printf(out, "profile stream: cannot bind UDP port %u (too many ports)\n", PROFILE_STREAM_SRC_PORT);
        return 1;
    case PROFILE_STREAM_NO_MEMORY:
        sink_puts(out, "profile stream: out of memory\n");
        return 1;
    case PROFILE_STREAM_NO_TASK:
        sink_puts(out, "profile stream: out of memory (no task)\n");
        return 1;
    }
    struct profile_stream_figures f;
    profile_stream_figures(&f);
    sink_printf(out, "profile stream: run %08x to ", run_id);
    print_address(out, dst, req->port);
    if (seconds)
        sink_printf(out, " for %u s", seconds);
    else
        sink_puts(out, " until profile stream stop");
    if (seconds != req->seconds)
        sink_puts(out, " (cut to when the token of this unkeyed request expires)");
    if (req->filter.by_pid)
        sink_printf(out, ", pid %u", req->filter.pid);
    if (req->wall)
        sink_puts(out, ", wall (every task every 10 ms)");
    sink_printf(out, ", source %s, headroom %u.%u s at 1 kHz per cpu\n", f.source,
                profile_stream_headroom_ms() / 1000, profile_stream_headroom_ms() % 1000 / 100);
    return 0;
}

/* "run 1f2e3d4c to 10.0.2.2:9000, 12.3 s, 4010 samples/s, sent 49213, ring dropped 0, unsent 0, 5470 datagrams,
 * task 1.2% of cpu 3" */
static void print_figures(struct sink *out, const struct profile_stream_figures *f, int64_t until_ns)
{
    uint64_t ms = until_ns > f->started_ns ? (uint64_t)(until_ns - f->started_ns) / 1000000 : 0;
    sink_printf(out, "run %08x to ", f->run);
    print_address(out, f->dst_ip, f->dst_port);
    sink_printf(out, ", %llu.%llu s, %llu samples/s, sent %llu, ring dropped %llu, unsent %llu, %llu datagrams",
                (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 100),
                (unsigned long long)(ms ? f->drained * 1000 / ms : 0), (unsigned long long)f->sent,
                (unsigned long long)f->ring_dropped, (unsigned long long)f->unsent,
                (unsigned long long)f->datagrams);
    uint64_t own = f->task_ticks, of = f->cpu_ticks;
    uint64_t tenths = of ? (own * 1000 + of / 2) / of : 0;
    sink_printf(out, ", task %llu.%llu%% of cpu %u", (unsigned long long)(tenths / 10),
                (unsigned long long)(tenths % 10), f->task_cpu);
    if (f->slow_ms)
        sink_printf(out, ", slowed %llu drains by %u ms", (unsigned long long)f->slowed, f->slow_ms);
}

static int stop_stream(const struct shell_origin *from, struct sink *out)
{
    struct profile_stream_figures f;
    profile_stream_figures(&f);
    if (!f.running) {
        sink_puts(out, "profile stream: not streaming\n");
        return 1;
    }
    struct profile_stream_origin origin = request_origin(from);
    if (!profile_stream_may_stop(&origin, f.dst_ip)) {
        sink_puts(out, "profile stream: an unkeyed request may stop only a stream to its own address\n");
        return 1;
    }
    profile_stream_stop();
    profile_stream_figures(&f);
    sink_puts(out, "profile stream: stopped: ");
    print_figures(out, &f, f.ended_ns);
    sink_printf(out, ", produced %llu\n", (unsigned long long)f.produced);
    return 0;
}

static int print_status(struct sink *out)
{
    struct profile_stream_figures f;
    profile_stream_figures(&f);
    if (f.running) {
        sink_puts(out, "profile stream: ");
        print_figures(out, &f, time_ns());
        sink_puts(out, "\n");
    } else if (f.ended) {
        sink_puts(out, "profile stream: idle; last ");
        print_figures(out, &f, f.ended_ns);
        sink_printf(out, ", produced %llu, ended: %s\n", (unsigned long long)f.produced,
                    profile_stream_reason_word(f.reason));
    } else {
        sink_puts(out, "profile stream: idle\n");
    }
    return 0;
}

int cmd_profile_stream(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    struct profile_stream_request req;
    if (!profile_stream_parse_args(argc, argv, &req))
        return shell_usage(out, "profile stream");
    switch (req.action) {
    case PROFILE_STREAM_STATUS:
        return print_status(out);
    case PROFILE_STREAM_STOP:
        return stop_stream(from, out);
    case PROFILE_STREAM_START:
        return start_stream(&req, from, out);
    }
    return 1;
}
