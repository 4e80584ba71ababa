/* kernel/cmd_profile.c: the `profile [ms] [pid|all] [chains|raw] [key=value]` shell command: parse the words
 * (kernel/profiler_args.c), start a run, sleep the window, stop, print the report (or the raw samples), give
 * the profiler back. */
#include "kernel/build_id.h"
#include "kernel/commands.h"
#include "kernel/profiler.h"
#include "kernel/profiler_args.h"
#include "kernel/profiler_raw.h"
#include "kernel/profiler_report.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

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
    int rc;
    if (req.raw) {
        char build_id[2 * PROFILE_BUILD_ID_MAX + 1];
        size_t len;
        const void *note = kernel_build_id_note(&len);
        if (!profile_build_id_hex(note, len, build_id, sizeof build_id))
            build_id[0] = 0;
        rc = profile_report_raw(&run, &req.filter, build_id, out);
    } else {
        rc = profile_report(&run, &req.filter, req.chains, kernel_symtab(), out);
    }
    profiler_release();
    return rc ? 1 : 0;
}
