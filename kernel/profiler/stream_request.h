/* kernel/profiler/stream_request.h: what `profile stream` is asked (kernel/profiler/stream_request.c) -- the
 * command's words parsed into a request, the rule for where a stream may go (the console anywhere it can reach,
 * an unkeyed UDP request only back to itself) and who may stop it. Portable: the host tests and the fuzz target
 * drive it; the command that applies it is kernel/shell/cmd_profile_stream.c. */
#ifndef KERNEL_PROFILER_STREAM_REQUEST_H
#define KERNEL_PROFILER_STREAM_REQUEST_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/profiler/run.h"
#include "kernel/profiler/stream_codec.h"

enum profile_stream_action {
    PROFILE_STREAM_STATUS, /* `profile stream` */
    PROFILE_STREAM_STOP,   /* `profile stream stop` */
    PROFILE_STREAM_START,  /* `profile stream HOST:PORT|PORT [SECONDS] [pid|all] [wall]` */
};

struct profile_stream_request {
    enum profile_stream_action action;
    bool has_host; /* false: PORT alone, to the address the request came from */
    uint32_t host;
    uint16_t port;
    uint32_t seconds; /* 0: until stopped */
    struct profile_filter filter;
    bool wall;        /* a wall run's samples (every task every 10 ms, whatever it does), not the CPUs' */
};

/* `profile stream ...` (argv[0] "profile", argv[1] "stream"). False for anything malformed, out of range or
 * extra; *req is then unspecified. */
bool profile_stream_parse_args(int argc, char **argv, struct profile_stream_request *req);

/* Where a request comes from: the console, or the UDP shell from ip, keyed (its MAC checked) or not. */
struct profile_stream_origin {
    bool udp;
    bool keyed;
    uint32_t ip;
};

/* The destination of a start request from origin, into *dst: NULL when it may go there, else the one-line
 * reason (without newline) it may not -- PORT alone on the console, an unkeyed request to another address
 * than its own, an address the UDP shell's allowlist does not permit (allowed(ip) false). */
const char *profile_stream_destination(const struct profile_stream_request *req,
                                       const struct profile_stream_origin *origin, bool (*allowed)(uint32_t ip),
                                       uint32_t *dst);
/* Whether origin may stop a stream that goes to dst_ip: the console and keyed requests any, an unkeyed one
 * only its own. */
bool profile_stream_may_stop(const struct profile_stream_origin *origin, uint32_t dst_ip);

#endif
