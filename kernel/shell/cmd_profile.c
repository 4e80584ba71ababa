/* kernel/shell/cmd_profile.c: the `profile [ms] [pid|all] [chains|raw] [key=value]` shell command (`profile stream`
 * goes on to kernel/shell/cmd_profile_stream.c): parse the words (kernel/profiler/args.c), start a run, copy
 * the rings' records into the window's capture (kernel/profiler/capture.c) while the window
 * (kernel/profiler/run.c) runs, stop, then fold them (kernel/profiler/fold.c) and print the report -- or
 * print them as raw lines (kernel/profiler/raw.c) -- keep a copy of the report for the debugger, and give
 * the profiler back. */
#include "hal/cpu.h"
#include "kernel/profiler/build_id.h"
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/args.h"
#include "kernel/profiler/capture.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler/stream_task.h"
#include "kernel/lib/string.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

char profile_kept_report[PROFILE_KEPT_REPORT_MAX];
uint32_t profile_kept_length;
_Atomic uint32_t profile_kept_run;

/* What the window drains into: the capture, and after the stop the fold, or (raw) the command's sink with the
 * trailer that counts the lines. */
struct window_drain {
    struct profile_run *run;
    const struct profile_request *req;
    struct profile_capture capture;
    struct profile_fold *fold;
    struct sink *out;
    struct profile_raw_trailer trailer;
};

/* One step of the window: a copy, nothing that would show up in the profile it is taking. */
static void drain_window(void *arg)
{
    struct window_drain *d = arg;
    profile_capture_drain(&d->capture, d->run, &d->req->filter);
}

/* After the stop: every record into the fold or out as a line, the window's copies first, then what the
 * stop left in the rings, in the order they were taken on each CPU. */
static void take_everything(struct window_drain *d)
{
    struct profile_run *copies = profile_capture_replay(&d->capture, d->run);
    if (d->req->raw) {
        profile_raw_drain(copies, NULL, d->out, &d->trailer);
        profile_raw_drain(d->run, &d->req->filter, d->out, &d->trailer);
    } else {
        profile_fold_drain(d->fold, copies, NULL, kernel_symtab());
        profile_fold_drain(d->fold, d->run, &d->req->filter, kernel_symtab());
    }
}

int cmd_profile(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    if (argc >= 2 && strcmp(argv[1], "stream") == 0)
        return cmd_profile_stream(argc, argv, out, from);
    struct profile_request req;
    if (!profile_parse_args(argc, argv, &req))
        return shell_usage(out, "profile");
    if (req.filter.by_pid && !task_exists(req.filter.pid)) {
        sink_printf(out, "profile: no task with pid %u\n", req.filter.pid);
        return 1;
    }

    /* The fold's table and the window's capture are allocated (and touched) before the window opens, so their
     * first touch of the heap (slow under a shadow-paging hypervisor) is not part of what the profile shows. */
    struct profile_run run;
    struct window_drain drain = { &run, &req, { .dropped = 0 }, NULL, out, { 0, 0 } };
    if ((!req.raw && !(drain.fold = profile_fold_create())) || !profile_capture_create(&drain.capture, req.ms)) {
        profile_fold_destroy(drain.fold);
        sink_puts(out, "profile: out of memory\n");
        return 1;
    }
    struct profile_fold *fold = drain.fold;
    struct label_stats labels_before;
    label_stats(&labels_before);
    int status = profiler_start(&run);
    if (status != PROFILER_OK) {
        profile_capture_destroy(&drain.capture);
        profile_fold_destroy(fold);
        char stream_text[80];
        if (status == PROFILER_BUSY && profile_stream_describe(stream_text, sizeof stream_text))
            sink_printf(out, "profile: busy: %s (profile stream stop ends it)\n", stream_text);
        else if (status == PROFILER_BUSY && profiler_holder_describe(stream_text, sizeof stream_text))
            sink_printf(out, "profile: busy: %s\n", stream_text);
        else
            sink_puts(out, status == PROFILER_BUSY ? "profile: busy\n" : "profile: out of memory\n");
        return 1;
    }
    /* The window, drained as it runs: every PROFILE_DRAIN_MS each CPU's records are copied out of its ring
     * into the capture, so 1024 records a CPU hold up at any rate the sources reach. */
    profiler_window(&run, req.ms, NULL, drain_window, &drain);
    profiler_stop(&run);
    int rc = 0;
    if (req.raw) {
        char build_id[2 * PROFILE_BUILD_ID_MAX + 1];
        size_t len;
        const void *note = kernel_build_id_note(&len);
        if (!profile_build_id_hex(note, len, build_id, sizeof build_id))
            build_id[0] = 0;
        profile_raw_begin(&run, build_id, out); /* after the stop: its window is the measured one */
        take_everything(&drain);
        profile_raw_end(&run, &drain.trailer, out);
    } else {
        take_everything(&drain);
        struct label_stats labels_after;
        label_stats(&labels_after);
        fold->labels_dropped = labels_after.dropped - labels_before.dropped;
        /* Printed once, to the command's sink and to the copy the debugger reads. */
        struct buffer_sink kept;
        struct tee_sink both;
        atomic_store(&profile_kept_run, 0);
        buffer_sink_init(&kept, profile_kept_report, sizeof profile_kept_report);
        tee_sink_init(&both, out, &kept.sink);
        rc = profile_report_print(&run, fold, &req.filter, req.chains, kernel_symtab(), &both.sink);
        if (drain.capture.dropped)
            sink_printf(&both.sink, "dropped %llu samples: the window's copy of the rings (%u records) was full\n",
                        (unsigned long long)drain.capture.dropped, drain.capture.ring.mask + 1);
        profile_kept_length = (uint32_t)(kept.len + kept.truncated);
        atomic_store(&profile_kept_run, run.run);
        profile_fold_destroy(fold);
    }
    profile_capture_destroy(&drain.capture);
    profiler_release();
    return rc ? 1 : 0;
}
