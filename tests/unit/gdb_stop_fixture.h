/* tests/unit/gdb_stop_fixture.h: the machine the stop/resume tests (test_gdb_stop_*.c) run gdbstub/stop.c on.
 *
 * Four threads stand in for four CPUs (gdb_stop_cpus.c). Each executes a little program of one-byte
 * instructions in its own window of the fake machine's memory (tests/unit/fake_target.c): an int3 byte (0xCC)
 * is a breakpoint trap, the trap flag traps after one instruction, a debug register matching the pc traps
 * before it (unless the resume flag is set), and stop requests arrive as an "NMI" flag the CPU takes between
 * instructions -- and, as real NMIs do, while it waits inside the debugger (park_idle, relax), but never while it
 * is already in its NMI handler. Odd CPUs leave NMI context by the detour before they park, even ones park
 * inside it. The register table is the real x86 one (arch/x86_64/gdb_regs.c), so gdb reads rip and rax of each
 * CPU's real saved context.
 *
 * The test plays gdb over a byte pipe to whichever CPU leads the session (gdb_stop_fixture.c: the pipe, gdb's
 * side of the protocol, the target, starting and stopping the machine, and the checks the cases share).
 * GDB_STOP_TRACE=1 in the environment prints each packet gdb sends, and the CPUs' state when the stub stops
 * answering. */
#ifndef TESTS_UNIT_GDB_STOP_FIXTURE_H
#define TESTS_UNIT_GDB_STOP_FIXTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86_64/gdb_regs.h"
#include "fake_target.h"
#include "gdbstub/stop.h"

#define RFLAGS_TF (1ull << 8)
#define RFLAGS_IF (1ull << 9)
#define RFLAGS_RF (1ull << 16)
#define NOP 0x90
#define INT3 FAKE_BREAK_INSN

/* CPU n runs [WINDOW(n), WINDOW(n) + WINDOW_SIZE), round and round. */
#define WINDOW_SIZE 0x400u
#define WINDOW(n) (FAKE_LOW_BASE + (uint64_t)(n) * WINDOW_SIZE)
/* Where trap() stops: a pc in no CPU's window. */
#define TRAP_PC (FAKE_HIGH_BASE + 0x100)

/* How long gdb waits for the stub's next byte before the test fails. */
#define GDB_WAIT_MS 10000

/* ---- the fake CPUs (gdb_stop_cpus.c) ------------------------------------------------------------------------ */

struct fake_cpu {
    unsigned index;
    pthread_t thread;
    atomic_bool quit;
    atomic_bool nmi;            /* a stop request's NMI, pending */
    atomic_bool panic_nmi;      /* the panicking CPU's NMI */
    atomic_bool panic_now;      /* panics: stops the others as panic() does, then enters the debugger */
    atomic_int irq;             /* 1: the transport's interrupt for an attach, 2: for Ctrl-C */
    atomic_bool irq_held;       /* between its interrupt's stop request and gdb_after_irq, until cleared */
    atomic_bool irq_requested;  /* it made that request and is held there */
    bool in_nmi;
    bool detour_pending;
    struct context *detour_to;  /* where leave_nmi copies the context the detour parks with */
    int priority;               /* what park_begin raises (x86: CR8), 0 while the CPU runs */
    atomic_bool nmi_at_park_end; /* at its next park_end, waits for a stop request's NMI and takes it there */
    atomic_uint nested_parks;   /* parks entered while leaving another */
    atomic_bool nested_window;  /* NMIs are taken at park_end (set with nmi_at_park_end) */
    atomic_bool nmi_at_rewind;  /* at its next breakpoint hit, once the stub rewinds its pc (decided: a
                                   breakpoint of gdb's) and before it enters the debugger, waits for a stop
                                   request's NMI and takes it there */
    atomic_bool at_rewind;      /* it waits there */
    bool wait_for_gdb;          /* starts as gdb=wait does */
    struct context ctx;         /* what the CPU runs */
    struct context saved;       /* the context the detour parks with */
    struct context inner;       /* the context of an NMI taken inside the debugger */
    uint64_t dr[4];
    bool dr_on[4];
    uint64_t rendezvous_addr;   /* before executing there the first time, wait for the other CPU that has one */
    atomic_ulong executed;      /* instructions executed */
    atomic_uint int3s;          /* breakpoint instructions executed */
    atomic_uint saved_elsewhere; /* save_cpu_state calls for this CPU that ran on another thread */
};

extern struct fake_cpu fcpu[FAKE_CPUS];
extern _Thread_local int this_cpu_id; /* the CPU this thread is, -1 on gdb's thread */
extern pthread_barrier_t rendezvous;  /* where two CPUs with a rendezvous_addr meet */
extern struct gdb_x86_cpu_state states[FAKE_CPUS];
extern atomic_bool transport_irq_on;
extern atomic_int transport_irq_cpu; /* where it goes when on: -1 the usual CPU (0) */
extern const struct gdb_arch_ops fake_arch;

uint8_t fetch(uint64_t addr);
/* The pc after pc in f's window (it runs round and round). */
uint64_t next_pc(const struct fake_cpu *f, uint64_t pc);
void *cpu_main(void *arg);
void dump_cpus(void);

/* ---- gdb's side and the machine (gdb_stop_fixture.c) --------------------------------------------------------- */

void gdb_send(const char *payload);
/* The stub's next packet, acknowledged; its payload in a static buffer. */
const char *gdb_receive(void);
void gdb_exchange(const char *packet, const char *reply);
/* A stop reply: its thread (CPU + 1); the rest of it must be `rest`. */
unsigned gdb_stop_reply(const char *signal, const char *rest);

/* MSRs through the mailbox: the access runs on the CPU it names, and says where it ran. An MSR of
 * SUSPEND_MSR runs into a software breakpoint at suspend_addr on the way (the debugger's own code hitting
 * a breakpoint gdb set in it). */
#define SUSPEND_MSR 0x777u
struct msr_job {
    unsigned cpu;
    uint32_t msr;
    uint64_t value;
    bool ok;
    int ran_on;
    bool trap_taken;
};
extern uint64_t suspend_addr;
extern struct msr_job job; /* the last MSR access through the mailbox */

void machine_start(bool stop_on_panic, bool wait_for_gdb);
/* gdb goes away: any session ends with the link lost, which removes the breakpoints and lets every CPU
 * run; then the CPUs stop for good. */
void machine_stop(void);
/* cmocka setup and teardown: a machine started (no gdb=panic, no gdb=wait), and stopped. */
int setup(void **state);
int teardown(void **state);

unsigned long executed(unsigned cpu);
void snapshot(unsigned long counts[FAKE_CPUS]);
/* Waits until every CPU in `which` (a bit per CPU) has run past its count in `since`. */
void wait_running(unsigned which, const unsigned long since[FAKE_CPUS]);
const char *thread_info(unsigned cpu);
/* Every CPU stopped, as the stub sees it, and none moves. */
void expect_all_stopped(void);
/* A register of a CPU, through Hg and p. */
uint64_t read_reg(unsigned cpu, unsigned regnum);

#define REGNUM_RAX 0
#define REGNUM_RIP 16
#define REGNUM_EFLAGS 17

/* What a new gdb sends first, then `?`: stopped by an attach on cpu 0 (thread 1). */
void attach(void);
/* Ctrl-C while the machine runs: the transport's interrupt, on the CPU it goes to (cpu 0 unless one CPU
 * runs alone). */
unsigned interrupt(void);

/* Steps `cpu` with `packet`: its stop reply names it, it executed exactly one instruction (its rip moved on
 * by one, interrupts as they were) and, when others_stay, nobody else moved. */
void expect_step(const char *packet, unsigned cpu, bool others_stay);
/* Continues with `packet`; every CPU runs, and Ctrl-C stops them again. */
void expect_continue(const char *packet);
/* `c`, and the machine keeps running with no stop reply: nothing stale stops it again. */
void expect_continue_runs_on(void);

#endif
