/* gdbstub/commands.h: the meaning of each packet gdb sends -- one packet in link->in, its reply sent (or, for
 * the packets that resume the machine, the resume done and the session marked ended). gdbstub/stub.c owns
 * the loop around it and the storage.
 *
 * Error replies carry an errno value in decimal digits: E03 no such thread, E05 the target refused
 * (register or MSR access, breakpoint removal), E07 packet too long, E14 bad address (unmapped,
 * non-canonical, wrapping, or a breakpoint that cannot be planted there), E22 malformed packet or argument,
 * E28 no room for another breakpoint. Packets the stub does not know get the empty reply. */
#ifndef GDBSTUB_COMMANDS_H
#define GDBSTUB_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#include "gdbstub/breakpoints.h"
#include "gdbstub/packet.h"
#include "gdbstub/stub.h"
#include "gdbstub/target.h"

/* What outlives a session. */
struct gdb_persistent {
    bool stop_reply_owed; /* the last session resumed the machine for gdb, which now waits to hear why it
                             stopped */
    bool gdb_swbreak;     /* gdb understands `swbreak` and `hwbreak` in stop replies (from qSupported) */
    bool gdb_hwbreak;
};

struct gdb_session {
    const struct gdb_target *target;
    struct gdb_link *link;
    struct gdb_persistent *keep;
    enum stop_reason reason;
    unsigned stopped_cpu;
    unsigned cpus;          /* target->cpu_count(), read once: thread ids are 1..cpus */
    unsigned g_cpu;         /* Hg: whose registers g/G/p/P touch */
    int c_cpu;              /* Hc: the CPU a plain s steps; -1 when gdb named all or any */
    unsigned next_thread;   /* qsThreadInfo continues the list from here */
    bool ended;
    enum gdb_session_end end;
};

/* Sends the stop reply for the session's stop (the `?` answer; also sent unprompted when gdb waits). Returns
 * false when the link is lost. */
bool gdb_send_stop_reply(struct gdb_session *s);

/* Handles the packet in s->link->in. Returns false when the link was lost while replying. */
bool gdb_handle_packet(struct gdb_session *s);

/* Answers a packet that arrived longer than GDB_PACKET_SIZE (E07). Returns false when the link is lost. */
bool gdb_reply_too_long(struct gdb_session *s);

#endif
