/* kernel/cmd_profile.c: the `profile [ms] [pid|all] [chains|raw] [key=value]` shell command -- its argument
 * parser, kept pure so the host tests can try every bad form, and the command itself: start a run, sleep the
 * window, stop, print the report (or the raw samples), give the profiler back. */
#include "kernel/commands.h"
#include "kernel/labels.h"
#include "kernel/parse.h"
#include "kernel/profiler_raw.h"
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
    req->filter.by_label = false;
    req->raw = false;

    /* The words that are not positional come out first: `raw`, and one filter recognised by its '='. */
    char *pos[3];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        bool has_eq = false;
        for (const char *p = argv[i]; *p && !has_eq; p++)
            has_eq = *p == '=';
        if (has_eq) {
            if (req->filter.by_label || !label_parse_pair(argv[i], &req->filter.label))
                return false;
            req->filter.by_label = true;
        } else if (strcmp(argv[i], "raw") == 0) {
            if (req->raw)
                return false;
            req->raw = true;
        } else {
            if (npos == 3)
                return false;
            pos[npos++] = argv[i];
        }
    }
    if (req->raw && npos > 2)
        return false; /* raw prints every sample: a chain count means nothing */

    uint64_t value;
    if (npos > 0) {
        if (!parse_u64_range(pos[0], PROFILE_MS_MIN, PROFILE_MS_MAX, &value))
            return false;
        req->ms = (uint32_t)value;
    }
    /* `all` is how a chain count is given without inventing a pid to filter by. */
    if (npos > 1 && strcmp(pos[1], "all") != 0) {
        if (!parse_u64_range(pos[1], 0, UINT32_MAX, &value))
            return false;
        req->filter.by_pid = true;
        req->filter.pid = (uint32_t)value;
    }
    if (npos > 2) {
        if (!parse_u64_range(pos[2], PROFILE_CHAINS_MIN, PROFILE_CHAINS_MAX, &value))
            return false;
        req->chains = (unsigned)value;
    }
    return true;
}

#ifndef KPROF_HOST
/* Defined by arch/x86_64/linker.ld around the .note.gnu.build-id section (ld --build-id, scripts/link.sh). */
extern const unsigned char __build_id_note[], __build_id_note_end[];

const void *kernel_build_id_note(size_t *len)
{
    *len = (size_t)(__build_id_note_end - __build_id_note);
    return __build_id_note;
}
#endif

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
