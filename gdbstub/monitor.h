/* gdbstub/monitor.h: gdb's `monitor` commands (the qRcmd packet) -- help, rdmsr, wrmsr, pmu, nobreak, poweroff.
 * The commands write to a struct sink (kernel/lib/sink.h), as the shell's commands do; the sink carries their
 * text to gdb in hex `O` packets. */
#ifndef GDBSTUB_MONITOR_H
#define GDBSTUB_MONITOR_H

#include <stdbool.h>

/* The longest monitor command line, and the output gathered before it is sent as one `O` packet. */
#define GDB_MONITOR_LINE 256
#define GDB_MONITOR_OUT 1024

struct gdb_session;

/* Answers the qRcmd,HEX packet in s->link->in: the command's output in `O` packets, then OK. Errors in the
 * command are output too (gdb shows a bare E reply only as "protocol error"); E22 is kept for a packet that
 * is not hex. Returns false when the link was lost. */
bool gdb_monitor_packet(struct gdb_session *s);

#endif
