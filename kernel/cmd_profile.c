/* kernel/cmd_profile.c: the `profile [ms] [pid|all] [chains]` shell command -- its argument parser, kept pure
 * so the host tests can try every bad form, and the command itself: start a run, sleep the window, stop,
 * print the report, give the profiler back. */
#include "kernel/commands.h"
#include "kernel/parse.h"
#include "kernel/profiler.h"
#include "kernel/string.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

bool profile_parse_args(int argc, char **argv, struct profile_request *req)
{
    req->ms = PROFILE_MS_DEFAULT;
    req->filter.by_pid = false;
    req->filter.pid = 0;
    req->chains = PROFILE_CHAINS_DEFAULT;

    if (argc > 4)
        return false;
    uint64_t value;
    if (argc > 1) {
        if (!parse_u64_range(argv[1], PROFILE_MS_MIN, PROFILE_MS_MAX, &value))
            return false;
        req->ms = (uint32_t)value;
    }
    /* `all` is how a chain count is given without inventing a pid to filter by. */
    if (argc > 2 && strcmp(argv[2], "all") != 0) {
        if (!parse_u64_range(argv[2], 0, UINT32_MAX, &value))
            return false;
        req->filter.by_pid = true;
        req->filter.pid = (uint32_t)value;
    }
    if (argc > 3) {
        if (!parse_u64_range(argv[3], PROFILE_CHAINS_MIN, PROFILE_CHAINS_MAX, &value))
            return false;
        req->chains = (unsigned)value;
    }
    return true;
}

int cmd_profile(int argc, char **argv, struct sink *out)
{
    struct profile_request req;
    if (!profile_parse_args(argc, argv, &req)) {
        sink_puts(out, "usage: " PROFILE_USAGE "\n");
        return 1;
    }
    if (req.filter.by_pid && !task_exists(req.filter.pid)) {
        sink_printf(out, "profile: no task with pid %u\n", req.filter.pid);
        return 1;
    }

    struct profile_run run;
    int status = profiler_start(&run);
    if (status == PROFILER_BUSY) {
        sink_puts(out, "profile: busy\n");
        return 1;
    }
    if (status != PROFILER_OK) {
        sink_puts(out, "profile: out of memory\n");
        return 1;
    }
    task_sleep_ms(req.ms);
    profiler_stop(&run);
    int rc = profile_report(&run, &req.filter, req.chains, kernel_symtab(), out);
    profiler_release();
    return rc ? 1 : 0;
}
