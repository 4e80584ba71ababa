/* kernel/shell/cmd_profile.c: the `profile [ms] [pid|all] [chains|raw] [key=value] [wall]` shell command
 * (`profile stream` goes on to kernel/shell/cmd_profile_stream.c, `profile top` to
 * kernel/shell/cmd_profile_top.c): parse the words (kernel/profiler/args.c), then a session
 * (kernel/profiler/session.h) run in the shell's task, whose consumer copies the rings' records into the
 * window's capture (kernel/profiler/capture.c) while the window runs and, once stopped, folds them
 * (kernel/profiler/fold.c) and prints the report -- or prints them as raw lines (kernel/profiler/raw.c) -- and
 * keeps a copy of the report for the debugger. */
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/args.h"
#include "kernel/profiler/capture.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler/session.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

/* The console's consumer of its session: in the window, each record is copied into the capture (nothing that
 * would show up in the profile it is taking); once the run has stopped, the window's copies go into the fold or
 * out as raw lines first, then what the stop left in the rings straight after them, in the order they were
 * taken on each CPU. */
struct console_profile {
    struct profile_session session;
    const struct profile_request *req;
    struct profile_capture capture;
    struct profile_fold *fold;
    struct sink *out;
    struct profile_raw_trailer trailer;
    bool stopped;
    int rc;
};

static void take(void *arg, const struct profile_record *rec)
{
    struct console_profile *p = arg;
    if (!p->stopped) {
        profile_capture_take(&p->capture, rec);
    } else if (p->req->raw) {
        struct profile_raw_into into = { p->out, &p->trailer };
        profile_raw_take(&into, rec);
    } else {
        struct profile_fold_into into = { p->fold, kernel_symtab() };
        profile_fold_take(&into, rec);
    }
}

static void stopped(struct profile_session *s)
{
    struct console_profile *p = s->arg;
    p->stopped = true;
    struct profile_run *copies = profile_capture_replay(&p->capture, &s->run);
    if (p->req->raw) {
        profile_raw_begin(&s->run, s->build_id, p->out); /* after the stop: its window is the measured one */
        profile_raw_drain(copies, NULL, p->out, &p->trailer);
    } else {
        profile_fold_drain(p->fold, copies, NULL, kernel_symtab());
    }
}

/* The report, printed once to the command's sink and to the copy the debugger reads; or the raw trailer. */
static void finish(struct profile_session *s)
{
    struct console_profile *p = s->arg;
    if (p->req->raw) {
        p->trailer.dropped = p->capture.dropped; /* the trailer counts every loss; the rings' are added */
        profile_raw_end(&s->run, &p->trailer, p->out);
        return;
    }
    p->fold->labels_dropped = s->labels_dropped;
    p->fold->kept_one_in = p->capture.keep_one_in;
    p->fold->thinned = p->capture.thinned;
    struct profile_kept_writer kept;
    profile_kept_open(&kept, p->out);
    p->rc = profile_report_print(&s->run, p->fold, &p->req->filter, p->req->chains, kernel_symtab(), kept.sink);
    if (p->capture.dropped)
        sink_printf(kept.sink, "dropped %llu samples: the window's copy of the rings (%u records) was full\n",
                    (unsigned long long)p->capture.dropped, p->capture.ring.mask + 1);
    profile_kept_close(&kept, s->run.run);
}

static const struct profile_consumer console_consumer = {
    .take = take,
    .stopped = stopped,
    .finish = finish,
};

/* The same, of a wall run: its records are tasks, not CPUs. */
static const struct profile_consumer console_wall_consumer = {
    .take = take,
    .stopped = stopped,
    .finish = finish,
    .wall = true,
};

static void count_task(struct task *task, void *arg)
{
    (void)task;
    (*(unsigned *)arg)++;
}

int cmd_profile(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    if (argc >= 2 && strcmp(argv[1], "stream") == 0)
        return cmd_profile_stream(argc, argv, out, from);
    if (argc >= 2 && strcmp(argv[1], "top") == 0)
        return cmd_profile_top(argc, argv, out, from);
    struct profile_request req;
    if (!profile_parse_args(argc, argv, &req))
        return shell_usage(out, "profile");
    if (req.filter.by_pid && !task_exists(req.filter.pid)) {
        sink_printf(out, "profile: no task with pid %u\n", req.filter.pid);
        return 1;
    }

    /* The fold's table and the window's capture are allocated (and touched) before the window opens, so their
     * first touch of the heap (slow under a shadow-paging hypervisor) is not part of what the profile shows. */
    struct console_profile p = { .req = &req, .out = out };
    /* A wall run's capture holds a record for each task (those now, and as many again) every period. */
    unsigned tasks = 0;
    if (req.wall)
        task_for_each(count_task, &tasks);
    if ((!req.raw && !(p.fold = profile_fold_create())) ||
        !(req.wall ? profile_capture_create_wall(&p.capture, req.ms, 2 * tasks)
                   : profile_capture_create(&p.capture, req.ms))) {
        profile_fold_destroy(p.fold);
        sink_puts(out, "profile: out of memory\n");
        return 1;
    }
    char holder[PROFILE_HOLDER_MAX];
    ksnprintf(holder, sizeof holder, "profile %u ms%s from %s", req.ms, req.wall ? " wall" : "",
              from && from->udp ? "the UDP shell" : "the console");
    int status = profile_session_start(&p.session, req.wall ? &console_wall_consumer : &console_consumer, &p,
                                       &req.filter, req.ms, holder);
    if (status == PROFILER_OK)
        /* The window, drained as it runs: every PROFILE_DRAIN_MS each CPU's records are copied out of its ring
         * into the capture, so 1024 records a CPU hold up at any rate the sources reach. */
        profile_session_run(&p.session);
    else if (status == PROFILER_BUSY) {
        char line[PROFILE_HOLDER_MAX + 40];
        profile_session_busy_line("profile", line, sizeof line);
        sink_printf(out, "%s\n", line);
    } else {
        sink_puts(out, "profile: out of memory\n");
    }
    profile_capture_destroy(&p.capture);
    profile_fold_destroy(p.fold);
    return status != PROFILER_OK || p.rc ? 1 : 0;
}
