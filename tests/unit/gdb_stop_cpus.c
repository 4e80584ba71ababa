/* tests/unit/gdb_stop_cpus.c: the four fake CPUs of the stop/resume tests (see gdb_stop_fixture.h) -- each a
 * thread executing its window of one-byte instructions, taking breakpoint and debug traps, stop-request NMIs,
 * the transport's interrupt and a panic -- and the gdb_arch_ops hooks gdbstub/stop.c drives them through. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "arch/x86_64/gdb_regs.h"
#include "fake_hal.h"
#include "fake_target.h"
#include "gdb_stop_fixture.h"
#include "gdbstub/breakpoints.h"
#include "gdbstub/packet.h"
#include "gdbstub/stop.h"
#include "gdbstub/stub.h"
#include "hal/debug.h"

/* ---- the fake CPUs ------------------------------------------------------------------------------------------ */

struct fake_cpu fcpu[FAKE_CPUS];
_Thread_local int this_cpu_id = -1;
pthread_barrier_t rendezvous;
struct gdb_x86_cpu_state states[FAKE_CPUS];
atomic_bool transport_irq_on;
atomic_int transport_irq_cpu; /* where it goes when on: -1 the usual CPU (0) */

static struct fake_cpu *me(void)
{
    assert_true(this_cpu_id >= 0);
    return &fcpu[this_cpu_id];
}

uint8_t fetch(uint64_t addr)
{
    uint8_t op = NOP;
    if (!fake_target.mem_read(addr, &op, 1))
        fail_msg("cpu %d fetched from unmapped 0x%llx", this_cpu_id, (unsigned long long)addr);
    return op;
}

uint64_t next_pc(const struct fake_cpu *f, uint64_t pc)
{
    return WINDOW(f->index) + (pc - WINDOW(f->index) + 1) % WINDOW_SIZE;
}

static void take_nmi(struct fake_cpu *f, struct context *interrupted)
{
    f->in_nmi = true;
    gdb_stop_nmi(interrupted);
    f->in_nmi = false;
}

/* An NMI can arrive wherever the CPU is, except inside its NMI handler. */
static void nmi_window(void)
{
    struct fake_cpu *f = me();
    if (!f->in_nmi && atomic_exchange(&f->nmi, false))
        take_nmi(f, &f->inner);
}

static void execute_one(struct fake_cpu *f)
{
    struct context *ctx = &f->ctx;
    uint64_t pc = ctx->rip;
    if (f->rendezvous_addr == pc) {
        f->rendezvous_addr = 0;
        pthread_barrier_wait(&rendezvous);
    }
    if (!(ctx->rflags & RFLAGS_RF)) {
        for (unsigned i = 0; i < 4; i++) {
            if (f->dr_on[i] && f->dr[i] == pc) {
                gdb_stop_debug_trap(ctx, false, 1u << i);
                return;
            }
        }
    }
    uint8_t op = fetch(pc);
    if (op == INT3) {
        atomic_fetch_add(&f->int3s, 1);
        ctx->rip = next_pc(f, pc);
        gdb_stop_breakpoint_insn(ctx, pc);
        return;
    }
    bool trap_after = ctx->rflags & RFLAGS_TF;
    ctx->rip = next_pc(f, pc);
    ctx->rax++;
    ctx->rflags &= ~RFLAGS_RF;
    atomic_fetch_add(&f->executed, 1);
    if (trap_after)
        gdb_stop_debug_trap(ctx, true, 0);
}

/* A pending stop request's NMI, taken: the CPU parks (out of NMI context, by the detour, when the stop asks
 * for that) and runs on once released. */
static bool nmi_taken(struct fake_cpu *f)
{
    if (!atomic_exchange(&f->nmi, false))
        return false;
    take_nmi(f, &f->ctx);
    if (f->detour_pending) {
        /* Out of the NMI: park with the copy, then resume the copy as released. */
        f->detour_pending = false;
        gdb_stop_park_detoured(&f->saved);
        f->ctx = f->saved;
    }
    return true;
}

void *cpu_main(void *arg)
{
    struct fake_cpu *f = arg;
    this_cpu_id = (int)f->index;
    if (f->wait_for_gdb)
        gdb_stop_wait_for_gdb();
    while (!atomic_load(&f->quit)) {
        if (atomic_exchange(&f->panic_nmi, false))
            gdb_panic_park(&f->ctx); /* under gdb=panic: never returns */
        if (atomic_exchange(&f->panic_now, false)) {
            for (unsigned n = 0; n < FAKE_CPUS; n++)
                if (n != f->index)
                    atomic_store(&fcpu[n].panic_nmi, true);
            f->ctx.rax = 0xdead;
            gdb_panic_enter(&f->ctx);
            for (;;)
                pause(); /* as platform_halt_forever() */
        }
        if (nmi_taken(f))
            continue;
        int irq = atomic_exchange(&f->irq, 0);
        if (irq) {
            gdb_request_stop(NULL, irq == 2);
            atomic_store(&f->irq_requested, true);
            /* The rest of the interrupt handler (its EOI): where another CPU's stop can NMI this one. */
            while (atomic_load(&f->irq_held))
                if (!nmi_taken(f))
                    sched_yield();
            gdb_after_irq(&f->ctx);
            continue;
        }
        execute_one(f);
        if (atomic_load(&f->executed) % 64 == 0)
            sched_yield(); /* four spinning threads share fewer host cores */
    }
    return NULL;
}

void dump_cpus(void)
{
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        fprintf(stderr, "cpu %u: executed %lu nested %u rip %llx rflags %llx saved.rflags %llx prio %d\n", n,
                (unsigned long)atomic_load(&fcpu[n].executed), atomic_load(&fcpu[n].nested_parks),
                (unsigned long long)fcpu[n].ctx.rip, (unsigned long long)fcpu[n].ctx.rflags,
                (unsigned long long)fcpu[n].saved.rflags, fcpu[n].priority);
}

/* ---- the arch hooks ----------------------------------------------------------------------------------------- */

static unsigned a_this_cpu(void) { return (unsigned)me()->index; }
static unsigned a_cpu_count(void) { return FAKE_CPUS; }
static bool a_cpu_online(unsigned cpu) { return cpu < FAKE_CPUS; }
static void a_stop_cpu(unsigned cpu) { atomic_store(&fcpu[cpu].nmi, true); }
static void a_wake_cpu(unsigned cpu) { (void)cpu; /* parked CPUs poll */ }

static void a_save_cpu_state(unsigned cpu, struct context *ctx)
{
    (void)ctx;
    if ((int)cpu != this_cpu_id)
        atomic_fetch_add(&fcpu[cpu].saved_elsewhere, 1);
    states[cpu] = (struct gdb_x86_cpu_state){ .ds = 0x10, .es = 0x10, .fs = 0x10, .gs = 0x10,
                                              .gs_base = 0xffffffff80100000ull + cpu * 0x1000 };
}

/* As on x86: no sleeping in NMI context. */
static bool a_park_begin(uint64_t *saved)
{
    struct fake_cpu *f = me();
    *saved = (uint64_t)f->priority;
    bool sleep = !f->in_nmi;
    if (sleep)
        f->priority = 1;
    return sleep;
}

static void a_park_idle(bool sleep, unsigned polls)
{
    (void)polls;
    nmi_window();
    if (sleep)
        usleep(20);
    else
        sched_yield();
}

/* The NMI of a stop request, taken inside the kernel's own code (the context `inner`), the detour out of
 * NMI context included; true when it took the detour. */
static bool nmi_inside(struct fake_cpu *f)
{
    struct context *outer = f->detour_to;
    struct context copy;
    f->detour_to = &copy;
    take_nmi(f, &f->inner);
    bool detoured = f->detour_pending;
    if (detoured) {
        f->detour_pending = false;
        gdb_stop_park_detoured(&copy);
    }
    f->detour_to = outer;
    return detoured;
}

/* Leaving a park, out of NMI context, a stop request's NMI can land here: the CPU takes the detour and parks
 * again on top of the park it is leaving, so park_begin/park_end must nest. Only where a test asks for it
 * (nmi_at_park_end): a CPU parked this way is stopped with a context inside the debugger, and a step of it
 * would step the debugger's own code, which the state machine drops as not gdb's -- a known limit. */
static void a_park_end(bool sleep, uint64_t saved)
{
    struct fake_cpu *f = me();
    if (!f->in_nmi && atomic_exchange(&f->nmi_at_park_end, false)) {
        for (int i = 0; i < 200000 && !atomic_load(&f->nmi); i++)
            usleep(50);
    }
    if (!f->in_nmi && atomic_load(&f->nested_window) && atomic_exchange(&f->nmi, false) && nmi_inside(f))
        atomic_fetch_add(&f->nested_parks, 1);
    if (sleep)
        f->priority = (int)saved;
}

/* Odd CPUs take the detour out of NMI context, even ones park inside it. */
static bool a_leave_nmi(struct context *ctx)
{
    struct fake_cpu *f = me();
    if (f->index % 2 == 0)
        return false;
    *f->detour_to = *ctx;
    f->detour_pending = true;
    return true;
}

static bool a_step_begin(struct context *ctx)
{
    ctx->rflags |= RFLAGS_TF;
    if (ctx->rflags & RFLAGS_IF) {
        ctx->rflags &= ~RFLAGS_IF;
        return true;
    }
    return false;
}

static void a_step_end(struct context *ctx, bool unmask)
{
    ctx->rflags &= ~RFLAGS_TF;
    if (unmask)
        ctx->rflags |= RFLAGS_IF;
}

static void a_skip_hw_break(struct context *ctx, bool skip)
{
    if (skip)
        ctx->rflags |= RFLAGS_RF;
    else
        ctx->rflags &= ~RFLAGS_RF;
}

static void a_load_debug_regs(void)
{
    struct fake_cpu *f = me();
    for (unsigned i = 0; i < 4; i++) {
        struct gdb_hw_slot h;
        f->dr_on[i] = gdb_break_hw_slot(i, &h);
        f->dr[i] = f->dr_on[i] ? h.addr : 0;
    }
}

static void a_set_pc(struct context *ctx, uint64_t addr)
{
    ctx->rip = addr;
    struct fake_cpu *f = me();
    if (!f->in_nmi && atomic_exchange(&f->nmi_at_rewind, false)) {
        atomic_store(&f->at_rewind, true);
        for (int i = 0; i < 200000 && !atomic_load(&f->nmi); i++)
            usleep(50);
        if (atomic_exchange(&f->nmi, false))
            nmi_inside(f);
        atomic_store(&f->at_rewind, false);
    }
}

static bool a_break_insn_at(uint64_t addr)
{
    uint8_t op;
    return !fake_target.mem_read(addr, &op, 1) || op == INT3;
}

static void a_trap(void)
{
    struct context here = { .rip = TRAP_PC + 1, .rflags = 0x2, .cs = 0x8, .ss = 0x10 };
    gdb_stop_breakpoint_insn(&here, TRAP_PC);
}

static void a_transport_irq(bool on, int cpu)
{
    atomic_store(&transport_irq_cpu, cpu);
    atomic_store(&transport_irq_on, on);
}

static void a_relax(void)
{
    nmi_window();
    /* The bounded waits run on the fake clock: a microsecond a call, so a CPU that never parks is given up
     * on eventually rather than hanging the test. */
    __atomic_fetch_add(&fake_time_ns, 1000, __ATOMIC_RELAXED);
    sched_yield();
}

const struct gdb_arch_ops fake_arch = {
    .this_cpu = a_this_cpu,
    .cpu_count = a_cpu_count,
    .cpu_online = a_cpu_online,
    .stop_cpu = a_stop_cpu,
    .wake_cpu = a_wake_cpu,
    .save_cpu_state = a_save_cpu_state,
    .park_begin = a_park_begin,
    .park_idle = a_park_idle,
    .park_end = a_park_end,
    .leave_nmi = a_leave_nmi,
    .step_begin = a_step_begin,
    .step_end = a_step_end,
    .skip_hw_break = a_skip_hw_break,
    .load_debug_regs = a_load_debug_regs,
    .set_pc = a_set_pc,
    .break_insn_at = a_break_insn_at,
    .trap = a_trap,
    .transport_irq = a_transport_irq,
    .relax = a_relax,
};
