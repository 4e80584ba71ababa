/* gdbstub/stub.h: the gdb remote stub's entry point. The machine, stopped, calls gdb_stub_session on one CPU;
 * the session talks to gdb until gdb resumes or detaches (D, or k: a debugger that quits without detaching
 * sends k, so it is a detach too), or the link is lost, and says which it was. The session itself performs the
 * resume (target->resume) before it returns, so the caller only has to let the CPUs go. (`monitor poweroff`
 * does not end a session: the machine is gone, or it could not go and stays stopped.)
 *
 * One session at a time: the caller serialises entries (a second CPU that stops meanwhile waits with the
 * others). The stub keeps a little state from one session to the next -- whether gdb is waiting for a stop
 * reply, what gdb said it supports, the breakpoints it has inserted -- in its own static storage. */
#ifndef GDBSTUB_STUB_H
#define GDBSTUB_STUB_H

#include "gdbstub/target.h"

/* Why the machine stopped. */
enum stop_reason {
    /* Nothing gdb is waiting to hear about: gdb=wait at boot, or bytes from gdb (not Ctrl-C) arrived while
     * the machine ran -- a debugger attaching. Reported as SIGTRAP when gdb asks (`?`). */
    GDB_STOP_ATTACH,
    /* Ctrl-C from gdb while the machine ran: SIGINT. */
    GDB_STOP_INTERRUPT,
    /* A software breakpoint the stub inserted (target->sw_break_insert). The target must already have moved
     * the CPU's instruction pointer back onto the breakpoint's address: gdb is told `swbreak`, which means
     * exactly that. SIGTRAP. */
    GDB_STOP_SW_BREAK,
    /* A hardware execution breakpoint (target->hw_break_insert): SIGTRAP, `hwbreak`. */
    GDB_STOP_HW_BREAK,
    /* A watchpoint matched (the access is done; the CPU stopped after the instruction): SIGTRAP, with
     * `watch:ADDR` or `awatch:ADDR` (gdb_break_watch_hit). */
    GDB_STOP_WATCH,
    /* The single step gdb asked for completed: SIGTRAP. */
    GDB_STOP_STEP,
    /* Any other debug trap (an int3 the stub did not insert): SIGTRAP. */
    GDB_STOP_TRAP,
    /* A kernel panic with gdb=panic: SIGABRT. */
    GDB_STOP_PANIC,
};

/* How a session ended. */
enum gdb_session_end {
    GDB_END_CONTINUE,  /* c, C, vCont;c: every CPU resumes */
    GDB_END_STEP,      /* s, S, vCont;s:N[;c]: target->resume(N, others_stay) was called */
    GDB_END_DETACH,    /* D: breakpoints removed, every CPU resumes, gdb is gone */
    GDB_END_KILL,      /* k: as D, answered X09 unacknowledged: breakpoints removed, every CPU resumes */
    GDB_END_LINK_LOST, /* the transport reported the link gone: breakpoints removed, every CPU resumes */
};

/* Runs one session. stopped_cpu is the CPU whose stop this is (0 .. target->cpu_count() - 1; a larger value
 * is taken as 0). When gdb is waiting for a stop reply -- the previous session ended in a resume and the
 * link held -- the session starts by sending it, unless reason is GDB_STOP_ATTACH. */
enum gdb_session_end gdb_stub_session(const struct gdb_target *target, const struct gdb_transport *transport,
                                      enum stop_reason reason, unsigned stopped_cpu);

/* Forgets the state kept between sessions, without calling the target: for a target that was replaced or
 * reset under the stub (host tests). The kernel never needs it; the state starts out empty. */
void gdb_stub_reset(void);

#endif
