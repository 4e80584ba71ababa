/* tests/unit/test_gdb_stop.c: the stop/resume state machine (gdbstub/stop.c) with four threads standing in
 * for four CPUs, and this test playing gdb over a byte pipe to whichever CPU leads the session.
 *
 * Each fake CPU executes a little program of one-byte instructions in its own window of the fake machine's
 * memory (tests/unit/fake_target.c): an int3 byte (0xCC) is a breakpoint trap, the trap flag traps after one
 * instruction, a debug register matching the pc traps before it (unless the resume flag is set), and stop
 * requests arrive as an "NMI" flag the CPU takes between instructions -- and, as real NMIs do, while it
 * waits inside the debugger (park_idle, relax), but never while it is already in its NMI handler. Odd CPUs
 * leave NMI context by the detour before they park, even ones park inside it. The register table is the
 * real x86 one (arch/x86_64/gdb_regs.c), so gdb reads rip and rax of each CPU's real saved context.
 *
 * What is checked: attaching stops all four and `c` runs them; Ctrl-C; gdb=wait; every vCont form gdb sends
 * and the legacy c/s, the refused forms answered E.. with nothing resumed; a step on one CPU while the
 * others stay parked (exactly one instruction, nobody else moves), repeated and moved between CPUs; a
 * breakpoint hit on two CPUs at once (both stop, one leads, the other's hit is reported after the first
 * resume); a hardware breakpoint stepped over; a stop request landing as a CPU leaves the debugger, which
 * parks it again on top of the park it is leaving (and both unwind); the mailbox running on the parked CPU itself, and a
 * breakpoint the debugger's own work runs into suspended until the machine resumes; a panic under
 * gdb=panic (in a child process: a panicked machine never runs again). GDB_STOP_TRACE=1 in the environment
 * prints each packet gdb sends, and the CPUs' state when the stub stops answering. */
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
#include "gdbstub/breakpoints.h"
#include "gdbstub/packet.h"
#include "gdbstub/stop.h"
#include "gdbstub/stub.h"
#include "hal/debug.h"

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

/* ---- the byte pipe between gdb (this test) and the stub ---------------------------------------------------- */

struct byte_pipe {
    pthread_mutex_t lock;
    pthread_cond_t more;
    unsigned char buf[1 << 16];
    size_t head, tail; /* bytes [tail, head) are waiting, indexes modulo the buffer */
    bool hung_up;
};

static struct byte_pipe to_stub, from_stub;

static void pipe_init(struct byte_pipe *p)
{
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    p->head = p->tail = 0;
    p->hung_up = false;
}

static void pipe_put(struct byte_pipe *p, const void *data, size_t len)
{
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < len; i++) {
        if (p->head - p->tail == sizeof p->buf)
            fail_msg("pipe overflow");
        p->buf[p->head++ % sizeof p->buf] = ((const unsigned char *)data)[i];
    }
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
}

/* The next byte, or -1 after timeout_ms (never, for -1) or once hung up and empty. */
static int pipe_get(struct byte_pipe *p, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    pthread_mutex_lock(&p->lock);
    int c = -1;
    for (;;) {
        if (p->head != p->tail) {
            c = p->buf[p->tail++ % sizeof p->buf];
            break;
        }
        if (p->hung_up)
            break;
        if (timeout_ms < 0)
            pthread_cond_wait(&p->more, &p->lock);
        else if (pthread_cond_timedwait(&p->more, &p->lock, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&p->lock);
    return c;
}

static void pipe_hang_up(struct byte_pipe *p)
{
    pthread_mutex_lock(&p->lock);
    p->hung_up = true;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
}

static int stub_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    return pipe_get(&to_stub, timeout_ms);
}

static void stub_putc(void *ctx, char c)
{
    (void)ctx;
    pipe_put(&from_stub, &c, 1);
}

static const struct gdb_transport pipe_transport = { .getc = stub_getc, .putc = stub_putc, .ctx = NULL };

/* ---- gdb's side --------------------------------------------------------------------------------------------- */

static void dump_cpus(void);

static int gdb_getc(void)
{
    int c = pipe_get(&from_stub, GDB_WAIT_MS);
    if (c < 0 && getenv("GDB_STOP_TRACE"))
        dump_cpus();
    if (c < 0)
        fail_msg("gdb: nothing from the stub for %d ms", GDB_WAIT_MS);
    return c;
}

static void gdb_send(const char *payload)
{
    if (getenv("GDB_STOP_TRACE"))
        fprintf(stderr, "gdb> %s\n", payload);
    size_t framed_len;
    char *framed = fake_frame(payload, strlen(payload), &framed_len);
    pipe_put(&to_stub, framed, framed_len);
    free(framed);
    int ack = gdb_getc();
    if (ack != '+')
        fail_msg("gdb: sent %s, the stub answered '%c' instead of its ack", payload, ack);
}

/* The stub's next packet, acknowledged; its payload in a static buffer. */
static const char *gdb_receive(void)
{
    static char payload[2 * GDB_PACKET_SIZE];
    int c;
    while ((c = gdb_getc()) != '$')
        if (c != '+')
            fail_msg("gdb: stray byte '%c' from the stub", c);
    size_t n = 0;
    while ((c = gdb_getc()) != '#') {
        assert_true(n + 1 < sizeof payload);
        payload[n++] = (char)c;
    }
    payload[n] = '\0';
    gdb_getc();
    gdb_getc();
    pipe_put(&to_stub, "+", 1);
    return payload;
}

static void gdb_exchange(const char *packet, const char *reply)
{
    gdb_send(packet);
    const char *got = gdb_receive();
    if (strcmp(got, reply) != 0)
        fail_msg("gdb: %s answered \"%s\", expected \"%s\"", packet, got, reply);
}

/* A stop reply: its thread (CPU + 1); the rest of it must be `rest`. */
static unsigned gdb_stop_reply(const char *signal, const char *rest)
{
    const char *got = gdb_receive();
    unsigned thread = 0;
    char tail[64] = "";
    char want_head[8];
    snprintf(want_head, sizeof want_head, "T%s", signal);
    if (strncmp(got, want_head, 3) != 0 || sscanf(got + 3, "thread:%x;%63s", &thread, tail) < 1 ||
        strcmp(tail, rest) != 0)
        fail_msg("gdb: stop reply \"%s\", expected T%sthread:N;%s", got, signal, rest);
    return thread;
}

/* ---- the fake CPUs ------------------------------------------------------------------------------------------ */

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

static struct fake_cpu fcpu[FAKE_CPUS];
static _Thread_local int this_cpu_id = -1;
static pthread_barrier_t rendezvous;
static struct gdb_x86_cpu_state states[FAKE_CPUS];
static atomic_bool transport_irq_on;
static atomic_int transport_irq_cpu; /* where it goes when on: -1 the usual CPU (0) */

static struct fake_cpu *me(void)
{
    assert_true(this_cpu_id >= 0);
    return &fcpu[this_cpu_id];
}

static uint8_t fetch(uint64_t addr)
{
    uint8_t op = NOP;
    if (!fake_target.mem_read(addr, &op, 1))
        fail_msg("cpu %d fetched from unmapped 0x%llx", this_cpu_id, (unsigned long long)addr);
    return op;
}

static uint64_t next_pc(const struct fake_cpu *f, uint64_t pc)
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

static void *cpu_main(void *arg)
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

static void dump_cpus(void)
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

static const struct gdb_arch_ops fake_arch = {
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

/* ---- the target the sessions run against ---------------------------------------------------------------- */

static void t_cpu_describe(unsigned cpu, char *buf, size_t cap)
{
    snprintf(buf, cap, gdb_stopped_context(cpu) ? "cpu %u, stopped" : "cpu %u, not stopped", cpu);
}

static bool t_reg_read(unsigned cpu, enum gdb_reg reg, uint64_t *value)
{
    struct context *ctx = gdb_stopped_context(cpu);
    return ctx && gdb_x86_reg_read(ctx, &states[cpu], reg, value);
}

static bool t_reg_write(unsigned cpu, enum gdb_reg reg, uint64_t value)
{
    struct context *ctx = gdb_stopped_context(cpu);
    return ctx && gdb_x86_reg_write(ctx, &states[cpu], reg, value);
}

/* MSRs through the mailbox: the access runs on the CPU it names, and says where it ran. An MSR of
 * SUSPEND_MSR runs into a software breakpoint at suspend_addr on the way (the debugger's own code hitting
 * a breakpoint gdb set in it). */
#define SUSPEND_MSR 0x777u
static uint64_t suspend_addr;
static struct msr_job {
    unsigned cpu;
    uint32_t msr;
    uint64_t value;
    bool ok;
    int ran_on;
    bool trap_taken;
} job;

static void msr_here(void *arg)
{
    struct msr_job *j = arg;
    j->ran_on = this_cpu_id;
    if (j->msr == SUSPEND_MSR) {
        struct context inside = { .rip = suspend_addr + 1, .rflags = 0x2 };
        j->trap_taken = gdb_stop_breakpoint_insn(&inside, suspend_addr);
        j->ok = inside.rip == suspend_addr && fetch(suspend_addr) != INT3;
        j->value = (uint64_t)j->ran_on;
        return;
    }
    j->ok = fake_target.msr_read(j->cpu, j->msr, &j->value);
}

static bool t_msr_read(unsigned cpu, uint32_t msr, uint64_t *value)
{
    job = (struct msr_job){ .cpu = cpu, .msr = msr, .ran_on = -1 };
    if (!gdb_on_cpu(cpu, msr_here, &job) || job.ran_on != (int)cpu || !job.ok)
        return false;
    *value = job.value;
    return true;
}

static struct gdb_target stop_target;

/* ---- the machine ---------------------------------------------------------------------------------------- */

static void machine_start(bool stop_on_panic, bool wait_for_gdb)
{
    fake_target_reset();
    gdb_stub_reset();
    fake_time_ns = 0;
    pipe_init(&to_stub);
    pipe_init(&from_stub);
    pthread_barrier_init(&rendezvous, NULL, 2);
    stop_target = fake_target;
    stop_target.cpu_describe = t_cpu_describe;
    stop_target.reg_read = t_reg_read;
    stop_target.reg_write = t_reg_write;
    stop_target.resume = gdb_stop_resume;
    stop_target.msr_read = t_msr_read;
    memset(states, 0, sizeof states);
    gdb_stop_init(&fake_arch, &stop_target, &pipe_transport, stop_on_panic);
    for (unsigned n = 0; n < FAKE_CPUS; n++) {
        uint8_t nops[WINDOW_SIZE];
        memset(nops, NOP, sizeof nops);
        assert_true(fake_target.mem_write(WINDOW(n), nops, sizeof nops));
        struct fake_cpu *f = &fcpu[n];
        memset(f, 0, sizeof *f);
        f->index = n;
        f->ctx = (struct context){ .rip = WINDOW(n), .rflags = 0x202, .cs = 0x8, .ss = 0x10 };
        f->wait_for_gdb = wait_for_gdb && n == 0;
        f->detour_to = &f->saved;
    }
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        assert_int_equal(pthread_create(&fcpu[n].thread, NULL, cpu_main, &fcpu[n]), 0);
}

/* gdb goes away: any session ends with the link lost, which removes the breakpoints and lets every CPU
 * run; then the CPUs stop for good. */
static void machine_stop(void)
{
    pipe_hang_up(&to_stub);
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        atomic_store(&fcpu[n].quit, true);
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        pthread_join(fcpu[n].thread, NULL);
    for (unsigned n = 0; n < FAKE_CPUS; n++) {
        assert_int_equal(atomic_load(&fcpu[n].saved_elsewhere), 0);
        assert_int_equal(fcpu[n].priority, 0); /* every park undone on the way out */
    }
    pthread_barrier_destroy(&rendezvous);
}

static int setup(void **state)
{
    (void)state;
    machine_start(false, false);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    machine_stop();
    return 0;
}

static unsigned long executed(unsigned cpu) { return atomic_load(&fcpu[cpu].executed); }

static void snapshot(unsigned long counts[FAKE_CPUS])
{
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        counts[n] = executed(n);
}

/* Waits until every CPU in `which` (a bit per CPU) has run past its count in `since`. */
static void wait_running(unsigned which, const unsigned long since[FAKE_CPUS])
{
    for (int tries = 0; tries < 20000; tries++) {
        bool all = true;
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            if ((which >> n & 1) && executed(n) <= since[n])
                all = false;
        if (all)
            return;
        usleep(500);
    }
    fail_msg("the CPUs in mask 0x%x did not run", which);
}

static const char *thread_info(unsigned cpu)
{
    char packet[32];
    snprintf(packet, sizeof packet, "qThreadExtraInfo,%x", cpu + 1);
    gdb_send(packet);
    static char text[128];
    const char *hex = gdb_receive();
    size_t n = strlen(hex) / 2;
    assert_true(n < sizeof text && hex_decode(text, hex, n));
    text[n] = '\0';
    return text;
}

/* Every CPU stopped, as the stub sees it, and none moves. */
static void expect_all_stopped(void)
{
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    for (unsigned n = 0; n < FAKE_CPUS; n++) {
        char want[32];
        snprintf(want, sizeof want, "cpu %u, stopped", n);
        assert_string_equal(thread_info(n), want);
    }
    usleep(2000);
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        assert_int_equal(executed(n), before[n]);
}

/* A register of a CPU, through Hg and p. */
static uint64_t read_reg(unsigned cpu, unsigned regnum)
{
    char packet[32];
    snprintf(packet, sizeof packet, "Hg%x", cpu + 1);
    gdb_exchange(packet, "OK");
    snprintf(packet, sizeof packet, "p%x", regnum);
    gdb_send(packet);
    const char *hex = gdb_receive();
    uint8_t bytes[8] = { 0 };
    size_t n = strlen(hex) / 2;
    assert_true(n <= 8 && hex_decode(bytes, hex, n));
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)bytes[i] << (8 * i);
    return v;
}

#define REGNUM_RAX 0
#define REGNUM_RIP 16
#define REGNUM_EFLAGS 17

/* What a new gdb sends first, then `?`: stopped by an attach on cpu 0 (thread 1). */
static void attach(void)
{
    atomic_store(&fcpu[0].irq, 1);
    gdb_exchange("qSupported:swbreak+;hwbreak+",
                 "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    gdb_exchange("?", "T05thread:1;");
    assert_false(atomic_load(&transport_irq_on));
}

/* Ctrl-C while the machine runs: the transport's interrupt, on the CPU it goes to (cpu 0 unless one CPU
 * runs alone). */
static unsigned interrupt(void)
{
    int cpu = atomic_load(&transport_irq_cpu);
    atomic_store(&fcpu[cpu < 0 ? 0 : cpu].irq, 2);
    return gdb_stop_reply("02", "");
}

/* ---- the cases --------------------------------------------------------------------------------------------- */

static void test_attach_stops_every_cpu_continue_runs_them_ctrl_c_and_detach(void **state)
{
    (void)state;
    attach();
    expect_all_stopped();
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    assert_int_equal(interrupt(), 1);
    expect_all_stopped();
    snapshot(before);
    gdb_exchange("D", "OK");
    wait_running(0xf, before);
    assert_true(atomic_load(&transport_irq_on));
}

static void test_gdb_wait_stops_before_the_first_instruction(void **state)
{
    (void)state;
    machine_stop();
    machine_start(false, true);
    gdb_exchange("?", "T05thread:1;");
    assert_int_equal(executed(0), 0);
    assert_int_equal(read_reg(0, REGNUM_RIP), TRAP_PC + 1);
    expect_all_stopped();
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
}

/* Steps `cpu` with `packet`: its stop reply names it, it executed exactly one instruction (its rip moved on
 * by one, interrupts as they were) and, when others_stay, nobody else moved. */
static void expect_step(const char *packet, unsigned cpu, bool others_stay)
{
    unsigned long before[FAKE_CPUS];
    uint64_t rip = read_reg(cpu, REGNUM_RIP);
    uint64_t eflags = read_reg(cpu, REGNUM_EFLAGS);
    snapshot(before);
    gdb_send(packet);
    unsigned thread = gdb_stop_reply("05", "");
    if (thread != cpu + 1)
        fail_msg("%s: the stop reply names thread %u, not %u", packet, thread, cpu + 1);
    assert_int_equal(executed(cpu), before[cpu] + 1);
    assert_int_equal(read_reg(cpu, REGNUM_RIP), next_pc(&fcpu[cpu], rip));
    assert_int_equal(read_reg(cpu, REGNUM_EFLAGS), eflags);
    if (others_stay)
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            if (n != cpu && executed(n) != before[n])
                fail_msg("%s: cpu %u ran while cpu %u stepped", packet, n, cpu);
    expect_all_stopped();
}

/* Continues with `packet`; every CPU runs, and Ctrl-C stops them again. */
static void expect_continue(const char *packet)
{
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send(packet);
    wait_running(0xf, before);
    assert_int_equal(interrupt(), 1);
    expect_all_stopped();
}

/* `c`, and the machine keeps running with no stop reply: nothing stale stops it again. */
static void expect_continue_runs_on(void)
{
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    usleep(20000);
    snapshot(before);
    wait_running(0xf, before);
    assert_int_equal(pipe_get(&from_stub, 0), -1);
}

static void test_every_vcont_form_and_the_legacy_ones(void **state)
{
    (void)state;
    attach();
    gdb_exchange("vCont?", "vCont;c;C;s;S");
    expect_continue("vCont;c");
    expect_continue("vCont;c:-1");
    expect_continue("vCont;C05");
    expect_continue("vCont;c:1;c:2;c:3;c:4"); /* every CPU by name is all of them */
    expect_continue("c");
    expect_continue("C05");
    expect_step("vCont;s:2", 1, true);
    expect_step("vCont;S05:4", 3, true);
    expect_step("vCont;s:3;c", 2, false);
    expect_step("vCont;s:1;c:2;c:3;c:4", 0, false);
    gdb_exchange("Hg4", "OK");
    expect_step("vCont;s:0;c", 3, false); /* thread 0: gdb's current one */
    /* A plain s steps gdb's current CPU (Hg) while the others run, or the CPU Hc names, alone. */
    gdb_exchange("Hg2", "OK");
    gdb_exchange("Hc-1", "OK");
    expect_step("s", 1, false);
    gdb_exchange("Hc3", "OK");
    expect_step("s", 2, true);
    gdb_exchange("Hc-1", "OK");
    expect_continue("c");
}

/* gdb's `set scheduler-locking on`: vCont;c:N runs CPU N alone while the others stay where they are -- the
 * leader among them, held -- and the transport's interrupt goes to the one that runs, so that Ctrl-C stops
 * it; a plain continue lets everyone go again. */
static void test_continue_one_cpu_alone_with_the_others_held(void **state)
{
    (void)state;
    attach();
    static const unsigned order[] = { 0, 2, 3, 1, 1, 0 };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        unsigned cpu = order[i];
        unsigned long before[FAKE_CPUS];
        snapshot(before);
        char packet[32];
        snprintf(packet, sizeof packet, "vCont;c:%x", cpu + 1);
        gdb_send(packet);
        wait_running(1u << cpu, before);
        usleep(2000);
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            if (n != cpu && executed(n) != before[n])
                fail_msg("%s: cpu %u ran", packet, n);
        assert_true(atomic_load(&transport_irq_on));
        assert_int_equal(atomic_load(&transport_irq_cpu), (int)cpu);
        assert_int_equal(interrupt(), cpu + 1);
        expect_all_stopped();
    }
    expect_continue("vCont;c");
    assert_int_equal(atomic_load(&transport_irq_cpu), -1);
}

static void test_refused_vcont_forms_resume_nothing(void **state)
{
    (void)state;
    attach();
    static const char *const malformed[] = {
        "vCont;c:1;c:2;c:3",   /* one left out */
        "vCont;c:1;c:2",       /* two running, two held */
        "vCont;s:1;c:2",       /* one stepping, one running, two held */
        "vCont;t",             /* stop: not offered */
        "vCont;t:1",
        "vCont;s",             /* every CPU stepping */
        "vCont;s:-1",
        "vCont;s:1;s:2",       /* two stepping */
        "vCont;",
        "vCont;c:zz",
        "vCont;r1000,2000",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        gdb_exchange(malformed[i], "E22");
    gdb_exchange("vCont;c:9", "E03");
    gdb_exchange("vCont;s:5;c", "E03");
    gdb_exchange("cz", "E22");
    gdb_exchange("S", "E22");
    expect_all_stopped();
    expect_continue("vCont;c");
}

static void test_step_one_cpu_repeatedly_and_from_cpu_to_cpu(void **state)
{
    (void)state;
    attach();
    /* The leader parks itself while another CPU steps; each step's trap makes the stepped CPU the leader. */
    for (unsigned i = 0; i < 12; i++) {
        unsigned cpu = (i * 3 + 1) % FAKE_CPUS;
        char packet[32];
        snprintf(packet, sizeof packet, "vCont;s:%x", cpu + 1);
        expect_step(packet, cpu, true);
    }
    for (unsigned i = 0; i < 5; i++)
        expect_step("vCont;s:3", 2, true);
    expect_continue("vCont;c");
}

static void test_breakpoint_hit_on_two_cpus_at_once(void **state)
{
    (void)state;
    attach();
    /* Both breakpoints a little ahead of where CPUs 1 and 2 are; each CPU waits at its own for the other, so
     * that the two int3s run together. */
    uint64_t at[FAKE_CPUS] = { 0 };
    for (unsigned cpu = 1; cpu <= 2; cpu++) {
        at[cpu] = next_pc(&fcpu[cpu], next_pc(&fcpu[cpu], read_reg(cpu, REGNUM_RIP)));
        char packet[48];
        snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)at[cpu]);
        gdb_exchange(packet, "OK");
        fcpu[cpu].rendezvous_addr = at[cpu];
    }
    char memory[8];
    snprintf(memory, sizeof memory, "%02x", NOP);
    char packet[48];
    snprintf(packet, sizeof packet, "m%llx,1", (unsigned long long)at[1]);
    gdb_exchange(packet, memory); /* gdb sees the code, not the int3 */
    gdb_send("c");

    unsigned first = gdb_stop_reply("05", "swbreak:;") - 1;
    assert_true(first == 1 || first == 2);
    unsigned second = 3 - first;
    assert_int_equal(read_reg(first, REGNUM_RIP), at[first]);
    expect_all_stopped();
    /* gdb steps the first CPU off its breakpoint (removed), and resumes: the second CPU's hit comes next. */
    snprintf(packet, sizeof packet, "z0,%llx,1", (unsigned long long)at[first]);
    gdb_exchange(packet, "OK");
    gdb_send("c");
    unsigned next = gdb_stop_reply("05", "swbreak:;") - 1;
    if (next != second)
        fail_msg("after cpu %u's breakpoint, the next stop is cpu %u's, not cpu %u's", first, next, second);
    assert_int_equal(read_reg(second, REGNUM_RIP), at[second]);
    /* The second CPU ran into its int3 during the first session, was held there, and ran into it again
     * once released: its first hit was not lost, and not reported twice. */
    assert_int_equal(atomic_load(&fcpu[second].int3s), 2);
    assert_int_equal(atomic_load(&fcpu[first].int3s), 1);
    expect_all_stopped();
    gdb_exchange("D", "OK");
    assert_int_equal(fake_sw_break_count(), 0);
}

/* gdb's Ctrl-C reaches one CPU's interrupt just as another CPU hits a breakpoint: the breakpoint's stop NMIs
 * the first CPU between the interrupt's stop request and its gdb_after_irq. That stop answers the request
 * (gdb hears of the breakpoint, on the transport the request came from); once gdb resumes, the first CPU's
 * gdb_after_irq finds nothing to do -- no second stop, whose reply nobody waits for, with the machine held. */
static void test_a_stop_request_overtaken_by_a_breakpoint_is_answered_by_it(void **state)
{
    (void)state;
    attach();
    uint64_t at = next_pc(&fcpu[2], next_pc(&fcpu[2], read_reg(2, REGNUM_RIP)));
    char packet[48];
    snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)at);
    gdb_exchange(packet, "OK");
    fcpu[2].rendezvous_addr = at; /* cpu 2 waits at its breakpoint for the test's go */
    atomic_store(&fcpu[1].irq_held, true);
    gdb_send("c");
    atomic_store(&fcpu[1].irq, 2);
    for (int i = 0; i < 20000 && !atomic_load(&fcpu[1].irq_requested); i++)
        usleep(100);
    assert_true(atomic_load(&fcpu[1].irq_requested));
    pthread_barrier_wait(&rendezvous); /* cpu 2 runs into its int3 */
    assert_int_equal(gdb_stop_reply("05", "swbreak:;"), 3);
    expect_all_stopped();
    atomic_store(&fcpu[1].irq_held, false); /* parked: it goes on to gdb_after_irq once resumed */
    packet[0] = 'z';
    gdb_exchange(packet, "OK");
    expect_continue_runs_on(); /* no stop came of the request */
    assert_int_equal(interrupt(), 1);
    gdb_exchange("D", "OK");
}

/* A CPU runs into a breakpoint; the stub has decided it is gdb's, and before it enters the debugger another
 * CPU's stop parks it. gdb removes both breakpoints and resumes: the first CPU's hit is stale (its
 * instruction is back and just runs), so nothing stops the machine -- it used to, with a stop reply for a
 * breakpoint gdb had deleted, nobody waiting for it and the machine held (the breakpoint sweep's console going
 * quiet, 1 cycle in about 500 under TCG). CPU 3 takes the detour out of NMI context, CPU 2 parks inside it. */
static void test_a_breakpoint_hit_overtaken_before_it_enters_is_not_reported_once_removed(void **state)
{
    (void)state;
    for (unsigned late = 2; late <= 3; late++) {
        attach();
        uint64_t hit = next_pc(&fcpu[1], next_pc(&fcpu[1], read_reg(1, REGNUM_RIP)));
        uint64_t overtaken = next_pc(&fcpu[late], next_pc(&fcpu[late], read_reg(late, REGNUM_RIP)));
        char hit_packet[48], overtaken_packet[48];
        snprintf(hit_packet, sizeof hit_packet, "Z0,%llx,1", (unsigned long long)hit);
        snprintf(overtaken_packet, sizeof overtaken_packet, "Z0,%llx,1", (unsigned long long)overtaken);
        gdb_exchange(hit_packet, "OK");
        gdb_exchange(overtaken_packet, "OK");
        fcpu[1].rendezvous_addr = hit; /* cpu 1 waits at its breakpoint for the test's go */
        atomic_store(&fcpu[late].nmi_at_rewind, true);
        gdb_send("c");
        for (int i = 0; i < 20000 && !atomic_load(&fcpu[late].at_rewind); i++)
            usleep(100);
        assert_true(atomic_load(&fcpu[late].at_rewind));
        pthread_barrier_wait(&rendezvous); /* cpu 1 runs into its int3 */
        assert_int_equal(gdb_stop_reply("05", "swbreak:;"), 2);
        expect_all_stopped();
        hit_packet[0] = overtaken_packet[0] = 'z';
        gdb_exchange(hit_packet, "OK");
        gdb_exchange(overtaken_packet, "OK");
        expect_continue_runs_on(); /* the stale hit stopped nothing */
        assert_int_equal(atomic_load(&fcpu[late].int3s), 1);
        interrupt();
        gdb_exchange("D", "OK");
    }
}

static void test_hardware_breakpoint_hit_then_stepped_over(void **state)
{
    (void)state;
    attach();
    uint64_t at = next_pc(&fcpu[3], next_pc(&fcpu[3], next_pc(&fcpu[3], read_reg(3, REGNUM_RIP))));
    char packet[48];
    snprintf(packet, sizeof packet, "Z1,%llx,1", (unsigned long long)at);
    gdb_exchange(packet, "OK");
    gdb_send("c");
    assert_int_equal(gdb_stop_reply("05", "hwbreak:;"), 4);
    assert_int_equal(read_reg(3, REGNUM_RIP), at);
    /* The step passes over the breakpoint it stands on (the resume flag) and stops after it. */
    expect_step("vCont;s:4", 3, true);
    snprintf(packet, sizeof packet, "z1,%llx,1", (unsigned long long)at);
    gdb_exchange(packet, "OK");
    expect_continue("c");
}

static void test_a_stop_request_as_a_cpu_leaves_parks_it_again_where_it_was(void **state)
{
    (void)state;
    attach();
    /* CPU 1 (it takes the detour) is released and, just before its park returns -- still inside the
     * debugger -- the next session's stop request reaches it. It parks again with the context it stopped
     * with, not one inside the debugger (where a step would never be reported: stepi hung), so gdb sees
     * it in its own code and a step of it completes. */
    atomic_store(&fcpu[1].nested_window, true);
    atomic_store(&fcpu[1].nmi_at_park_end, true);
    gdb_send("c");
    usleep(2000);
    assert_int_equal(interrupt(), 1);
    expect_all_stopped();
    assert_int_equal(atomic_load(&fcpu[1].nested_parks), 0);
    uint64_t rip = read_reg(1, REGNUM_RIP);
    if (rip < WINDOW(1) || rip >= WINDOW(1) + WINDOW_SIZE)
        fail_msg("cpu 1 parked at 0x%llx, outside its own code", (unsigned long long)rip);
    expect_step("vCont;s:2", 1, true);
    expect_step("vCont;s:2;c", 1, false);
    atomic_store(&fcpu[1].nested_window, false);
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    assert_int_equal(interrupt(), 1);
    gdb_exchange("D", "OK");
    wait_running(0xf, before);
}

static void expect_monitor(const char *command, const char *output)
{
    char packet[128] = "qRcmd,";
    hex_encode(packet + 6, command, strlen(command));
    packet[6 + 2 * strlen(command)] = '\0';
    gdb_send(packet);
    const char *got = gdb_receive();
    char want[256] = "O";
    hex_encode(want + 1, output, strlen(output));
    want[1 + 2 * strlen(output)] = '\0';
    if (strcmp(got, want) != 0)
        fail_msg("monitor %s: got %s", command, got);
    assert_string_equal(gdb_receive(), "OK");
}

static void test_mailbox_runs_on_the_parked_cpu_and_own_breakpoints_step_aside(void **state)
{
    (void)state;
    attach();
    expect_monitor("rdmsr cpu 2 0x10", "cpu 2 msr 0x10 = 0x00000000000003ea\n");
    expect_monitor("rdmsr cpu 0 0x10", "cpu 0 msr 0x10 = 0x00000000000003e8\n");
    expect_monitor("rdmsr cpu 3 0x38f", "cpu 3 msr 0x38f = 0x000000070000000f\n");
    expect_monitor("rdmsr cpu 1 0xdead", "error: cpu 1 msr 0xdead: rdmsr faulted\n");
    /* CPU 3's mailbox work runs into a breakpoint gdb set: it is taken, not stopped at, and its byte is
     * back until the machine resumes. */
    suspend_addr = FAKE_HIGH_BASE + 0x200;
    char packet[48];
    snprintf(packet, sizeof packet, "Z0,%llx,1", (unsigned long long)suspend_addr);
    gdb_exchange(packet, "OK");
    assert_int_equal(fake_memory_byte(suspend_addr), INT3);
    expect_monitor("rdmsr cpu 3 0x777", "cpu 3 msr 0x777 = 0x0000000000000003\n");
    assert_true(job.trap_taken);
    assert_int_equal(fake_memory_byte(suspend_addr), fake_memory_pattern(0x200));
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    assert_int_equal(fake_memory_byte(suspend_addr), INT3); /* planted again as the machine resumed */
    assert_int_equal(interrupt(), 1);
    gdb_exchange("D", "OK");
    assert_int_equal(fake_memory_byte(suspend_addr), fake_memory_pattern(0x200));
}

/* In a child: a panicked machine never runs again, so its CPU threads cannot be joined. */
static void panic_scenario(void)
{
    setenv("CMOCKA_TEST_ABORT", "1", 1); /* a failed check aborts the child, which the parent sees */
    machine_start(true, false);
    attach();
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    atomic_store(&fcpu[2].panic_now, true);
    assert_int_equal(gdb_stop_reply("06", ""), 3); /* gdb waits after its `c`: the panic is the stop */
    gdb_exchange("?", "T06thread:3;");
    expect_all_stopped();
    assert_int_equal(read_reg(2, REGNUM_RAX), 0xdead);
    /* Each resume ends in a new stop, at the same place; nobody runs. */
    for (int i = 0; i < 3; i++) {
        snapshot(before);
        gdb_send(i == 0 ? "c" : "vCont;s:1");
        assert_int_equal(gdb_stop_reply("06", ""), 3);
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            assert_int_equal(executed(n), before[n]);
    }
    expect_all_stopped();
    _exit(0);
}

static void test_panic_enters_the_debugger_and_nothing_runs_again(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        panic_scenario();
    int status = 0;
    pid_t done = 0;
    for (int waited = 0; waited < 60000 && done == 0; waited += 10) {
        done = waitpid(child, &status, WNOHANG);
        if (done == 0)
            usleep(10000);
    }
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        fail_msg("the panic scenario did not finish");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the panic scenario failed (status 0x%x)", status);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_attach_stops_every_cpu_continue_runs_them_ctrl_c_and_detach, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gdb_wait_stops_before_the_first_instruction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_vcont_form_and_the_legacy_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_continue_one_cpu_alone_with_the_others_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_vcont_forms_resume_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_one_cpu_repeatedly_and_from_cpu_to_cpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_breakpoint_hit_on_two_cpus_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_stop_request_overtaken_by_a_breakpoint_is_answered_by_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_breakpoint_hit_overtaken_before_it_enters_is_not_reported_once_removed,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_hardware_breakpoint_hit_then_stepped_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_stop_request_as_a_cpu_leaves_parks_it_again_where_it_was, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_mailbox_runs_on_the_parked_cpu_and_own_breakpoints_step_aside, setup,
                                        teardown),
        cmocka_unit_test(test_panic_enters_the_debugger_and_nothing_runs_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
