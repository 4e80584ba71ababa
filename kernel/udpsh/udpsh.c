/* kernel/udpsh/udpsh.c: the UDP shell -- the only way to ask a box whose console is a network socket. One
 * datagram is one command line; the network task checks the sender against the allowlist and the line against
 * udpsh_request_line, and hands it to the UDP shell task, which runs it through the same command table and
 * sinks as the console (so `profile 2000` never stalls the network task) and sends the output back in
 * datagrams with a trailer (kernel/udpsh/wire.h, docs/udp-shell.md). One command at a time: a request
 * meanwhile is answered `busy`, a repeat of it nothing (its answer is on the way). Senders outside the allowlist
 * (net_peer_permitted, kernel/net/allowlist.h) get nothing; everything after that -- the token, the two sides
 * of the rate limit (kernel/net/ratelimit.h), the key, repeats answered from the remembered answer -- is
 * udpsh_auth_judge's, in the order kernel/udpsh/auth.h gives; without udpsh.key only the commands that read
 * run, and a udpsh.key= that cannot be used (does not parse, or sits on a cut command line) refuses everything. */
#include <stdatomic.h>

#include "kernel/net/boot_secret.h"
#include "kernel/cmdline.h"
#include "kernel/shell/commands.h"
#include "kernel/shell/shell.h"
#include "kernel/log.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/net/netload.h"
#include "kernel/net/net_report.h"
#include "kernel/net/ratelimit.h"
#include "kernel/udpsh/udpsh.h"
#include "kernel/udpsh/auth.h"
#include "kernel/udpsh/wire.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

static uint16_t port = UDPSH_DEFAULT_PORT;
static struct udpsh_auth auth;
static struct task *shell_task;
static atomic_bool busy;
static struct {
    uint32_t ip;
    uint16_t port;
    uint64_t seq;
    bool keyed; /* its MAC checked out under udpsh.key */
    int64_t token_expires_ns;
    struct udpsh_remembered *remembered; /* where its answer is kept for a repeat, or NULL */
    char line[UDPSH_LINE_MAX + 1];
} request;
static uint64_t next_seq = 1;
static struct {
    uint64_t requests, refused_busy, refused_bad, not_allowed;
} counters;

static bool names_a_command(const char *name)
{
    return shell_find_command(name) != 0;
}

struct reply_to {
    uint32_t ip;
    uint16_t port;
};

static void send_queued(void *arg, const char *data, size_t len)
{
    const struct reply_to *to = arg;
    net_udp_send(NET_UDP_QUEUE_OR_FAIL, port, to->ip, to->port, data, len);
}

/* The network task, for every datagram on the shell's port. */
static void request_arrived(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *data, size_t len)
{
    (void)arg;
    if (!net_peer_permitted(src_ip)) {
        counters.not_allowed++;
        return;
    }
    int64_t now = time_ns();
    /* Read once, before judging: a repeat judged against the running request is answered (or not) by the same
     * reading, so a repeat whose token expired is never answered from the remembered reply. */
    bool running = atomic_load_explicit(&busy, memory_order_acquire);
    struct udpsh_judgement judged;
    udpsh_auth_judge(&auth, src_ip, src_port, data, len, now, running ? request.remembered : NULL, &judged);
    if (judged.verdict == UDPSH_DROP)
        return;
    /* Refusals go through the send queue, as command replies do, not straight to the device: while netload
     * sends flat out the transmit ring is full nearly all the time, and a refusal sent "now" was silently lost
     * (the soak saw 10 of 60 go unanswered), leaving the client to wait out its whole timeout. */
    if (judged.verdict == UDPSH_REPLY) {
        net_udp_send(NET_UDP_QUEUE_OR_FAIL, port, src_ip, src_port, judged.reply, judged.reply_len);
        return;
    }
    if (judged.verdict == UDPSH_REPEAT) {
        /* The request still running is answered when it ends; any other remembered answer is complete, the
         * busy flag's release having published it. */
        if (running && judged.remembered == request.remembered) {
            auth.counts.repeats_running++;
            return;
        }
        if (judged.remembered->too_long)
            auth.counts.repeats_lost++;
        else
            auth.counts.repeats++;
        struct reply_to to = { src_ip, src_port };
        udpsh_remembered_replay(judged.remembered, send_queued, &to);
        return;
    }
    if (running) {
        counters.refused_busy++;
        net_udp_send(NET_UDP_QUEUE_OR_FAIL, port, src_ip, src_port, UDPSH_REPLY_BUSY, sizeof UDPSH_REPLY_BUSY - 1);
        return;
    }
    const char *refusal = udpsh_request_line(judged.line, judged.line_len, request.line);
    if (refusal) {
        counters.refused_bad++;
        net_udp_send(NET_UDP_QUEUE_OR_FAIL, port, src_ip, src_port, refusal, strlen(refusal));
        return;
    }
    if (!judged.keyed && !udpsh_unkeyed_allows(request.line, src_ip, names_a_command)) {
        auth.counts.needs_key++;
        net_udp_send(NET_UDP_QUEUE_OR_FAIL, port, src_ip, src_port, UDPSH_REPLY_NEEDS_KEY,
                     sizeof UDPSH_REPLY_NEEDS_KEY - 1);
        return;
    }
    request.ip = src_ip;
    request.port = src_port;
    request.keyed = judged.keyed;
    request.token_expires_ns = judged.token_expires_ns;
    request.remembered = udpsh_remember_start(&auth, src_ip, src_port, &judged, now);
    request.seq = next_seq++;
    counters.requests++;
    atomic_store_explicit(&busy, true, memory_order_release);
    task_wake(shell_task);
}

static void send_datagram(void *arg, const char *data, size_t len)
{
    (void)arg;
    udpsh_remember_datagram(request.remembered, data, len);
    net_udp_send(NET_UDP_WAIT, port, request.ip, request.port, data, len);
}

static void udp_shell(void *arg)
{
    (void)arg;
    static struct reply_chunker chunker;
    for (;;) {
        while (!atomic_load_explicit(&busy, memory_order_acquire))
            task_block(TASK_WAIT_NET);
        chunker_init(&chunker, request.seq, send_datagram, 0);
        /* Unkeyed, a long send to the requester itself lasts no longer than the token that allowed it. */
        struct shell_origin from = { .udp = true, .keyed = request.keyed, .ip = request.ip, .port = request.port,
                                     .until_ns = request.keyed ? 0 : request.token_expires_ns };
        int result = shell_run_line(request.line, &from, chunker_sink(&chunker));
        chunker_finish(&chunker, result);
        atomic_store_explicit(&busy, false, memory_order_release);
    }
}

/* The token secret (kernel/net/boot_secret.h), under no domain label: what it always was. */
static void start_auth(void)
{
    struct keyed_boot boot;
    keyed_boot_draw("", &boot);
    udpsh_auth_init(&auth, boot.secret, boot.key_len ? boot.key : 0, boot.key_len);
    if (boot.key_refused) {
        /* As the debugger does: a key meant to guard the shell that cannot be read guards nothing, so the shell
         * takes nothing rather than run unkeyed. */
        log_warn("udpsh: udpsh.key: %s; the UDP shell refuses every request", boot.key_error);
        auth.key_refused = true;
    }
    /* Where the secret's entropy came from, and whether it is weak, the entropy pool said once at boot. */
    memset(&boot, 0, sizeof boot);
    if (auth.service.keyed)
        log_info("udpsh: keyed (%u bits): every request must carry its MAC", (unsigned)(auth.service.key_len * 8));
}

static void udpsh_report(struct sink *out, bool trusted);

void udpsh_init(void)
{
    if (!net_available())
        return;
    static struct net_report lines = { udpsh_report, NET_REPORT_SHELL, NULL };
    net_report_add(&lines);
    const char *port_opt = cmdline_get("udpsh.port");
    uint64_t p;
    if (port_opt) {
        if (parse_u64_range(port_opt, 1, 65535, &p))
            port = (uint16_t)p;
        else
            log_warn("udpsh: udpsh.port=%s is not a port 1..65535; using %u", port_opt, port);
    }
    uint64_t per_second = RATELIMIT_DEFAULT;
    const char *rate_opt = cmdline_get("udpsh.rate");
    if (rate_opt && !parse_u64_range(rate_opt, 0, RATELIMIT_MAX, &per_second)) {
        log_warn("udpsh: udpsh.rate=%s is not a rate 0..%u; using %u", rate_opt, RATELIMIT_MAX, RATELIMIT_DEFAULT);
        per_second = RATELIMIT_DEFAULT;
    }
    start_auth();
    const char *window_opt = cmdline_get("udpsh.token_window_ms");
    uint64_t window_ms;
    if (window_opt && !(parse_u64(window_opt, &window_ms) && udpsh_auth_set_token_window_ms(&auth, window_ms)))
        log_warn("udpsh: udpsh.token_window_ms=%s is not %u..%u ms; tokens live %u to %u s", window_opt,
                 UDPSH_TOKEN_WINDOW_MS_MIN, UDPSH_TOKEN_WINDOW_MS_MAX,
                 (unsigned)(UDPSH_TOKEN_WINDOW_NS / 1000000000), (unsigned)(2 * UDPSH_TOKEN_WINDOW_NS / 1000000000));
    else if (window_opt)
        log_info("udpsh: a token lives %u to %u ms (udpsh.token_window_ms=, a test knob)", (unsigned)window_ms,
                 (unsigned)(2 * window_ms));
    ratelimit_init(&auth.rate, (uint32_t)per_second, time_ns());
    net_peers_init(); /* udpsh.allow=, which every UDP service goes by (kernel/net/allowlist.h) */
    shell_task = task_spawn("udpsh", udp_shell, 0, 0);
    if (!shell_task || !net_udp_bind(port, request_arrived, 0)) {
        log_warn("udpsh: cannot start the UDP shell");
        return;
    }
    log_info("udpsh: listening on UDP port %u (%s)", port, net_peers_rule());
}

static void udpsh_report(struct sink *out, bool trusted)
{
    (void)trusted;
    const struct udpsh_auth_counts *c = &auth.counts;
    sink_printf(out, "udpsh: port %u, %llu requests, %llu busy, %llu refused, %llu not allowed", port,
                (unsigned long long)counters.requests, (unsigned long long)counters.refused_busy,
                (unsigned long long)(counters.refused_bad + c->too_long), (unsigned long long)counters.not_allowed);
    if (auth.rate.per_second)
        sink_printf(out, ", %llu over %u/s\n", (unsigned long long)c->validated_limited, auth.rate.per_second);
    else
        sink_puts(out, ", no rate limit\n");
    sink_printf(out, "udpsh auth: %s, %llu tokens sent, %llu over budget, %llu replies ignored, %llu no mac, "
                     "%llu bad mac, %llu replayed, %llu senders full, %llu need a key\n",
                auth.service.keyed ? "keyed" : auth.key_refused ? "refusing all (bad udpsh.key)" : "unkeyed",
                (unsigned long long)c->tokens_sent, (unsigned long long)c->over_budget,
                (unsigned long long)c->replies_ignored, (unsigned long long)c->no_mac, (unsigned long long)c->bad_mac,
                (unsigned long long)c->replayed, (unsigned long long)c->senders_full,
                (unsigned long long)c->needs_key);
    /* Where datagrams without a good token went beyond their token answers, and what resent requests got. */
    sink_printf(out, "udpsh door: %llu unvalidated over %u/s, %llu key refused, %llu repeats answered, "
                     "%llu repeats while running, %llu repeats too long to keep, %llu token expiry stops\n",
                (unsigned long long)c->unvalidated_limited, auth.rate.per_second,
                (unsigned long long)c->key_refused, (unsigned long long)c->repeats,
                (unsigned long long)c->repeats_running, (unsigned long long)c->repeats_lost,
                (unsigned long long)netload_token_stops());
}
