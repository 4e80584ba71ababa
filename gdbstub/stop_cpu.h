/* gdbstub/stop_cpu.h: inside the stop/resume state machine (gdbstub/stop.h is its face), what its two files
 * share: each CPU's record, the machine-wide words every CPU reads, and the steps of a park. gdbstub/stop.c is
 * the leader's side and the ways in, gdbstub/park.c a stopped CPU's; nothing else includes this. */
#ifndef GDBSTUB_STOP_CPU_H
#define GDBSTUB_STOP_CPU_H

#include <stdatomic.h>
#include <stdbool.h>

#include "gdbstub/breakpoints.h"
#include "gdbstub/stop.h"
#include "hal/cpu.h"

struct context;

enum cpu_state { CPU_RUNNING, CPU_PARKED, CPU_RELEASING };
/* Who decides what becomes of a parked CPU: nobody yet (NONE), a session that counted it as parked and will
 * release it (OWNER), or the CPU itself, leaving unseen because it read that no session would (LEAVING). One
 * CAS each way, so the two can never both win: a session that sees a CPU parked and claims it knows it stays;
 * one that finds it LEAVING asks it to stop like a running CPU. Without this, a CPU that parked as a loser
 * and read `stop_closing` still true from the session before, just as a new owner saw it parked and so sent it
 * no NMI, left the park unseen and never stopped for that session ("not stopped" in info threads). */
enum claim { CLAIM_NONE, CLAIM_OWNER, CLAIM_LEAVING };
enum mbox_state { MBOX_IDLE, MBOX_REQUEST, MBOX_DONE };

struct stop_cpu {
    _Atomic int state;           /* enum cpu_state; written by the CPU itself, but PARKED -> RELEASING by the owner */
    _Atomic int claim;           /* enum claim: meaningful while PARKED; reset by the CPU each time it parks */
    atomic_bool stop_req;        /* the owner's NMI is a stop request */
    int depth;                   /* >0 while this CPU is parked or runs a session: traps here are the debugger's own */
    struct context *ctx;         /* the interrupted context, while parked or owning */
    bool stepping;               /* released stepping: its next single-step trap is the step */
    bool step_masked;            /* interrupts were masked for that one instruction, to be given back */
    struct context *step_ctx;    /* the context released stepping */
    unsigned step_session;       /* `stop_sessions` when it was: a later session makes it stale */
    bool trap_pending;           /* the breakpoint instruction this CPU is about to execute is trap()'s */
    bool in_park;                /* between parking and running again, park()'s loop included */
    bool released;               /* an owner let it go (it was part of that session), not left by itself */
    bool trapping;               /* between its own stop (a trap, the transport's interrupt) and parking or owning */
    atomic_bool stop_waiting;    /* a stop request gdb_stop_nmi left for enter() or park() to act on */
    enum stop_reason trap_why;
    struct gdb_hw_slot watch;    /* the watchpoint this CPU stopped for, until its session notes it */
    bool watch_pending;
    /* The mailbox, served while parked. */
    _Atomic int mbox;            /* enum mbox_state */
    void (*fn)(void *arg);
    void *arg;
} __attribute__((aligned(64)));

extern struct stop_cpu stop_cpus[MAX_CPUS];
extern atomic_int stop_owner;                /* the CPU running a session, -1 when none */
extern atomic_bool stop_closing;             /* the session is over or letting CPUs go: none may join it */
extern atomic_uint stop_sessions;            /* sessions begun so far */
extern bool stop_enabled;                    /* gdb_stop_init ran */
extern bool stop_on_panic;                   /* gdb=panic */
extern const struct gdb_arch_ops *stop_arch;

/* How a CPU came to park. PARK_ASKED: the owner's stop request. PARK_LOSER: a trap of its own while another
 * CPU owned the debugger. Either leaves at once, unseen, when the session it would join is over or already
 * letting CPUs go (`stop_closing`): nobody would release it. PARK_HELD: held for good (a panic) or until the
 * CPU it lets step becomes the owner; it waits whatever happens. */
enum park_mode { PARK_ASKED, PARK_LOSER, PARK_HELD };

/* Parks this CPU with ctx until a session releases it (again, while a stop request came as it was leaving):
 * true when a session saw it parked, false when it left by itself, unseen (see enum park_mode). */
bool park(struct context *ctx, enum park_mode mode);
/* c, this CPU me, stopped with ctx: its context for the leader, and what the arch keeps beside it. */
void stop_record(unsigned me, struct stop_cpu *c, struct context *ctx);
/* c's context made ready to run again, stepping or not; and that undone for a CPU held after all. */
void stop_prepare_release(struct stop_cpu *c, bool step);
void stop_unprepare_release(struct stop_cpu *c);

#endif
