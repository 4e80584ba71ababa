/* gdbstub/stub.c: the session (gdbstub/stub.h) -- receive a packet, let commands.c answer it, until a packet
 * resumes the machine or detaches (D, k) or the link goes. The buffers are static: a session runs on whatever stack
 * the stopped CPU had, and two packets' worth of bytes do not belong there. */
#include <stdbool.h>

#include "gdbstub/breakpoints.h"
#include "gdbstub/commands.h"
#include "gdbstub/packet.h"
#include "gdbstub/stub.h"
#include "kernel/lib/string.h"

static struct gdb_link link;
static struct gdb_session session;
static struct gdb_persistent keep;

void gdb_stub_reset(void)
{
    memset(&keep, 0, sizeof keep);
    gdb_break_reset();
}

/* The link is gone: nobody can remove breakpoints or resume the machine later, so do both now. */
static enum gdb_session_end link_lost(struct gdb_session *s)
{
    gdb_break_remove_all(s->target);
    s->keep->stop_reply_owed = false;
    s->target->resume(-1, false, false);
    return GDB_END_LINK_LOST;
}

enum gdb_session_end gdb_stub_session(const struct gdb_target *target, const struct gdb_transport *transport,
                                      enum stop_reason reason, unsigned stopped_cpu)
{
    struct gdb_session *s = &session;
    gdb_link_init(&link, transport);
    unsigned cpus = target->cpu_count();
    if (cpus == 0)
        cpus = 1;
    if (stopped_cpu >= cpus)
        stopped_cpu = 0;
    *s = (struct gdb_session){
        .target = target,
        .link = &link,
        .keep = &keep,
        .reason = reason,
        .stopped_cpu = stopped_cpu,
        .cpus = cpus,
        .g_cpu = stopped_cpu,
        .c_cpu = -1,
    };

    /* gdb resumed the machine and waits to hear why it stopped -- unless this stop is gdb's own doing (bytes
     * from it while running), which means the debugger that waited is gone and a new one is attaching. */
    bool owed = keep.stop_reply_owed;
    keep.stop_reply_owed = false;
    if (owed && reason != GDB_STOP_ATTACH && !gdb_send_stop_reply(s))
        return link_lost(s);

    for (;;) {
        bool link_held;
        switch (gdb_link_receive(&link)) {
        case GDB_EVENT_PACKET:
            link_held = gdb_handle_packet(s);
            break;
        case GDB_EVENT_TOO_LONG:
            link_held = gdb_reply_too_long(s);
            break;
        case GDB_EVENT_INTERRUPT:
            /* Ctrl-C while already stopped: nothing to interrupt. */
            link_held = true;
            break;
        case GDB_EVENT_LOST:
        default:
            link_held = false;
            break;
        }
        if (s->ended)
            return s->end; /* the resume or detach is done, even if the link went while answering */
        if (!link_held)
            return link_lost(s);
    }
}
