/* kernel/profiler/args.h: the `profile` command's arguments (kernel/profiler/args.c), parsed into a request:
 * the window, the pid or label filter, the chain count or the raw form. Pure, so the host tests can try every
 * bad form. */
#ifndef KERNEL_PROFILER_ARGS_H
#define KERNEL_PROFILER_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/profiler/fold.h"
#include "kernel/profiler/run.h"

#define PROFILE_MS_MIN 1
#define PROFILE_MS_MAX 2000
#define PROFILE_MS_DEFAULT 1000
#define PROFILE_CHAINS_MIN 1
#define PROFILE_CHAINS_MAX PROFILE_CHAIN_TABLE
#define PROFILE_CHAINS_DEFAULT 8

struct profile_request {
    uint32_t ms;
    struct profile_filter filter;
    unsigned chains;
    bool raw;  /* every sample as a line (kernel/profiler/raw.h) instead of the report */
    bool wall; /* a wall profile: every task every PROFILE_WALL_PERIOD_MS, whatever it is doing */
};

/* `profile [ms] [pid|all] [chains|raw] [key=value] [wall]` (argv[0] is the command's name). The numbers are
 * positional; the words `raw` and `wall` and one label filter `key=value` (recognised by its '=') may stand
 * anywhere after the name, each once, and `raw` takes no chain count. False for anything malformed, out of
 * range or extra; *req is then unspecified. */
bool profile_parse_args(int argc, char **argv, struct profile_request *req);

#endif
