/* kernel/shell/cmd_profile_top.c: `profile top [ms] [N]` -- the hottest functions, redrawn every interval until a
 * key is pressed or N intervals have passed. Each interval is a session of its own (kernel/profiler/session.h):
 * claim, a window of ms drained into a fold (kernel/profiler/fold.h), stop, release; the table
 * (kernel/profiler/top.h) sums each fold by leaf symbol. So between intervals the profiler is free: anyone may
 * start a profile, a stream or an HTTP profile then, and when the next interval finds it held, top ends with the
 * busy line every other start gives. On the console each frame replaces the last (cursor home, erase below:
 * the serial terminal and the kernel's own screens, kernel/lib/ansi.h, both do it); over the UDP shell, where no
 * key can stop it, it runs a fixed count and each frame goes out as one datagram of the reply (sink_flush). */
#include "kernel/console.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/profiler.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/session.h"
#include "kernel/profiler/top.h"
#include "kernel/shell/commands.h"
#include "kernel/symbols.h"

#define FRAME_MAX 4096              /* a frame: ten rows, the header and the source line, with room to spare */

struct top_interval {
    struct profile_session session;
    struct profile_fold *fold;
    struct profile_top *top;
    const struct profile_top_request *req;
    bool watch_keys; /* the console's: a key pressed ends the interval early, and top after it */
    bool key;
    struct buffer_sink frame; /* the interval's frame, written while the run is still the session's */
    char text[FRAME_MAX];
};

/* Folding in the window, not after it: an interval's records are a few hundred a CPU, and the fold's cost (the
 * shell task's, cmd=profile) is what top shows of itself. */
static void take(void *arg, const struct profile_record *rec)
{
    struct top_interval *t = arg;
    struct profile_fold_into into = { t->fold, kernel_symtab() };
    profile_fold_take(&into, rec);
}

static bool should_stop(struct profile_session *s, bool window_over)
{
    struct top_interval *t = s->arg;
    if (t->watch_keys && console_input_pending())
        t->key = true;
    return window_over || t->key;
}

/* The last drain is done and the run is still this session's: the frame is written now, into a buffer, because
 * the source line reads the run's per-CPU accounts, which the next holder's run takes over once this one lets
 * go; it goes out after the release, so the profiler is not held while the console prints it. */
static void finish(struct profile_session *s)
{
    struct top_interval *t = s->arg;
    profile_top_add(t->top, t->fold);
    buffer_sink_init(&t->frame, t->text, sizeof t->text);
    profile_top_print(t->top, &s->run, t->req->ms, t->req->intervals, PROFILE_TOP_ROWS, &t->frame.sink);
}

static const struct profile_consumer top_consumer = {
    .take = take,
    .should_stop = should_stop,
    .finish = finish,
};

/* One interval into top and its frame: PROFILER_OK, or why it could not run (the busy line or out of memory,
 * said on out). */
static int one_interval(struct top_interval *t, const char *holder, struct sink *out)
{
    t->fold = profile_fold_create();
    if (!t->fold) {
        sink_puts(out, "profile top: out of memory\n");
        return PROFILER_NO_MEMORY;
    }
    int status = profile_session_start(&t->session, &top_consumer, t, 0, t->req->ms, holder);
    if (status == PROFILER_OK) {
        profile_session_run(&t->session);
    } else if (status == PROFILER_BUSY) {
        char line[PROFILE_HOLDER_MAX + 40];
        profile_session_busy_line("profile top", line, sizeof line);
        sink_printf(out, "%s\n", line);
    } else {
        sink_puts(out, "profile top: out of memory\n");
    }
    profile_fold_destroy(t->fold);
    t->fold = 0;
    return status;
}

int cmd_profile_top(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    bool udp = from && from->udp;
    struct profile_top_request req;
    char why[120];
    if (!profile_top_parse_args(argc, argv, udp, &req, why, sizeof why)) {
        sink_printf(out, "%s\n", why);
        return 1;
    }
    struct profile_top *top = kmalloc(sizeof *top);
    struct top_interval *t = kzalloc(sizeof *t);
    if (!top || !t) {
        kfree(top);
        kfree(t);
        sink_puts(out, "profile top: out of memory\n");
        return 1;
    }
    profile_top_init(top);
    t->top = top; /* the rest zeroed: no key yet */
    t->req = &req;
    t->watch_keys = !udp;
    char holder[PROFILE_HOLDER_MAX];
    ksnprintf(holder, sizeof holder, "profile top %u ms from %s", req.ms, udp ? "the UDP shell" : "the console");
    /* A terminal that sends CR LF for Enter leaves the LF of this very line waiting (the line editor takes it
     * as part of the Enter, kernel/shell/lineedit.c): it is no key pressed to stop top. */
    if (!udp && console_input_peek() == '\n')
        console_read_char();
    int status = PROFILER_OK;
    while (req.intervals == 0 || top->intervals < req.intervals) {
        status = one_interval(t, holder, out);
        if (status != PROFILER_OK)
            break;
        if (!udp)
            sink_puts(out, PROFILE_TOP_CLEAR);
        sink_write(out, t->frame.buf, t->frame.len);
        if (!udp && !t->key && (req.intervals == 0 || top->intervals < req.intervals))
            sink_puts(out, "(any key stops)\n");
        sink_flush(out);
        if (t->key) {
            console_read_char(); /* the key that stopped top is its, not the next line's */
            break;
        }
    }
    kfree(t);
    kfree(top);
    return status == PROFILER_OK ? 0 : 1;
}
