/* kernel/profiler/stream_request.c: what `profile stream` is asked (kernel/profiler/stream_request.h): its words
 * parsed strictly, the destination rule and who may stop a stream. Pure: the host tests and the fuzz target
 * drive it. */
#include "kernel/profiler/stream_request.h"

#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

/* "a.b.c.d:PORT" or "PORT". */
static bool parse_target(const char *word, struct profile_stream_request *req)
{
    const char *colon = 0;
    for (const char *p = word; *p; p++)
        if (*p == ':')
            colon = colon ? word : p; /* a second colon: make the host part fail below */
    uint64_t port;
    if (!colon) {
        req->has_host = false;
        req->host = 0;
    } else {
        char host[16];
        size_t n = (size_t)(colon - word);
        if (colon == word || n >= sizeof host)
            return false;
        memcpy(host, word, n);
        host[n] = 0;
        if (!parse_ipv4(host, &req->host))
            return false;
        req->has_host = true;
        word = colon + 1;
    }
    if (!parse_u64_range(word, 1, 65535, &port))
        return false;
    req->port = (uint16_t)port;
    return true;
}

bool profile_stream_parse_args(int argc, char **argv, struct profile_stream_request *req)
{
    memset(req, 0, sizeof *req);
    if (argc < 2 || strcmp(argv[0], "profile") != 0 || strcmp(argv[1], "stream") != 0)
        return false;
    if (argc == 2) {
        req->action = PROFILE_STREAM_STATUS;
        return true;
    }
    if (strcmp(argv[2], "stop") == 0) {
        req->action = PROFILE_STREAM_STOP;
        return argc == 3;
    }
    req->action = PROFILE_STREAM_START;
    /* `wall`, last, after the target and the numbers */
    if (argc > 3 && strcmp(argv[argc - 1], "wall") == 0) {
        req->wall = true;
        argc--;
    }
    if (argc > 5 || !parse_target(argv[2], req))
        return false;
    int at = 3;
    uint64_t value;
    /* SECONDS is a number; `all` in its place means "until stopped, every task" */
    if (at < argc && strcmp(argv[at], "all") != 0) {
        if (!parse_u64_range(argv[at], 0, PROFILE_STREAM_SECONDS_MAX, &value))
            return false;
        req->seconds = (uint32_t)value;
        at++;
    }
    if (at < argc) {
        if (strcmp(argv[at], "all") != 0) {
            if (!parse_u64_range(argv[at], 0, UINT32_MAX, &value))
                return false;
            req->filter.by_pid = true;
            req->filter.pid = (uint32_t)value;
        }
        at++;
    }
    return at == argc;
}

const char *profile_stream_destination(const struct profile_stream_request *req,
                                       const struct profile_stream_origin *origin, bool (*allowed)(uint32_t ip),
                                       uint32_t *dst)
{
    if (!req->has_host && !origin->udp)
        return "profile stream: PORT alone means \"to the address this request came from\": on the console give "
               "HOST:PORT";
    uint32_t ip = req->has_host ? req->host : origin->ip;
    if (origin->udp && !origin->keyed && ip != origin->ip)
        return "profile stream: an unkeyed request may stream only to its own address (udpsh.key)";
    if (!allowed(ip))
        return "profile stream: that address is not in the UDP shell's allowlist (udpsh.allow)";
    *dst = ip;
    return 0;
}

bool profile_stream_may_stop(const struct profile_stream_origin *origin, uint32_t dst_ip)
{
    return !origin->udp || origin->keyed || origin->ip == dst_ip;
}
