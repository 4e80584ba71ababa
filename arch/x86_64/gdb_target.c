/* arch/x86_64/gdb_target.c: the machine the gdb remote stub (gdbstub/) debugs -- its struct gdb_target -- and
 * the stopping and starting of CPUs around each debugger session.
 *
 * Stopping. Whatever stops the machine (a breakpoint, a single step, a debug-register hit, the COM2 interrupt
 * of an attaching gdb, gdb=wait, a panic under gdb=panic) ends in enter() on one CPU, which becomes the
 * owner by winning `owner`. It asks every other running CPU to stop (its stop_req flag, then an NMI to it
 * alone) and waits until each has parked: saved a pointer to its interrupted context and stopped in park().
 * A CPU stopped by NMI parks outside NMI context (gdb_nmi's detour), so that it can sleep in HLT and be woken
 * by an ordinary IPI; a CPU that hits a trap of its own while another CPU owns the debugger parks as that
 * session's (its event is not lost: an int3 is rewound and fires again once released, if still there). Then
 * the owner runs the protocol (gdb_stub_session) over COM2, polled.
 *
 * Resuming. The stub's resume() only records the choice; when the session returns the owner releases the
 * parked CPUs that are to run (state PARKED -> RELEASING, then a wake-up IPI; each loads the debug registers
 * itself and goes back to RUNNING), clears `owner` and returns into its own context, or -- stepping another
 * CPU with the rest held (vCont;s:N) -- parks itself, and the stepped CPU's #DB makes it the next owner. A
 * new session may begin while CPUs of the last one are still leaving: gdb_nmi() puts those back where they
 * were, and a CPU that reaches the debugger's lock as a session closes waits for it and reports its own stop.
 *
 * What a stopped CPU does for the owner. MSRs and the LAPIC are per CPU, so a parked CPU serves a mailbox:
 * the owner posts a request (read or write an MSR, or call a function), the parked CPU performs it on
 * itself, fault-tolerantly (the exception-fixup table), and posts the answer.
 *
 * Memory. gdb's reads and writes never fault the kernel: an address is checked canonical and every page of
 * the range is looked up in the live page tables (CR3) -- present, and writable for writes -- before a byte
 * is touched. Breakpoint bytes are written the same way, with CR0.WP lifted for a read-only text page. */
#include <stdatomic.h>

#include "arch/x86_64/arch.h"
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/msr.h"
#include "arch/x86_64/x86.h"
#include "gdbstub/stub.h"
#include "gdbstub/target.h"
#include "hal/cpu.h"
#include "hal/debug.h"
#include "hal/platform.h"
#include "hal/pmu.h"
#include "kernel/cmdline.h"
#include "kernel/format.h"
#include "kernel/log.h"
#include "kernel/sink.h"
#include "kernel/string.h"
#include "kernel/task.h"

#define RFLAGS_TF (1ull << 8)
#define RFLAGS_RF (1ull << 16)
#define DR6_HIT_MASK 0xFull     /* B0..B3: which debug register matched */
#define DR6_BS (1ull << 14)     /* single step */
#define DR6_RESET 0xFFFF0FF0ull /* the value that clears every status bit */
#define DR7_RESERVED_ONE (1ull << 10)
#define CR0_WP (1ull << 16)

#define PTE_PRESENT 0x1ull
#define PTE_WRITABLE 0x2ull
#define PTE_LARGE 0x80ull
#define PTE_ADDR 0x000FFFFFFFFFF000ull

#define SW_BREAK_MAX 64
#define HW_BREAK_MAX 4

/* How long the owner waits for a CPU to park, and for a parked CPU to answer the mailbox. Generous: under
 * TCG four vCPUs share fewer host cores, and a CPU may be in a long NMI handler. */
#define STOP_WAIT_MS 2000
#define MAILBOX_WAIT_MS 1000

enum cpu_state { CPU_RUNNING, CPU_PARKED, CPU_RELEASING };
enum mbox_state { MBOX_IDLE, MBOX_REQUEST, MBOX_DONE };
enum mbox_op { OP_RDMSR, OP_WRMSR, OP_CALL };

struct dbg_cpu {
    _Atomic int state;           /* enum cpu_state; written by the CPU itself, but PARKED -> RELEASING by the owner */
    atomic_bool stop_req;        /* the owner's NMI is a stop request */
    int depth;                   /* >0 while this CPU is parked or runs a session: traps here are the debugger's own */
    struct context *ctx;         /* the interrupted context, while parked or owning */
    struct task *task;           /* the task it was running when it stopped */
    uint64_t fs_base;
    bool stepping;               /* released with TF set by the debugger: its next single-step #DB is the step */
    bool step_cleared_if;        /* IF was cleared for that one instruction, to be given back */
    struct context *step_ctx;    /* the context released with TF */
    unsigned step_session;       /* `sessions` when it was: a later session makes the step stale */
    bool trap_pending;           /* the int3 this CPU is about to execute is the debugger's own trap() */
    bool in_park;                /* between parking and running again, park()'s loop included */
    bool released;               /* an owner let it go (it was part of that session), not left by itself */
    bool trapping;               /* between its own stop (a trap, COM2's interrupt) and parking or owning */
    atomic_bool stop_waiting;    /* a stop request gdb_nmi left for enter() or park() to act on */
    enum stop_reason trap_why;
    /* The mailbox, served while parked. */
    _Atomic int mbox;            /* enum mbox_state */
    int op;
    uint32_t msr;
    uint64_t value;
    bool ok;
    void (*fn)(void *arg);
    void *arg;
} __attribute__((aligned(64)));

static struct dbg_cpu dcpu[MAX_CPUS];
static atomic_int owner = -1;           /* the CPU running a session, -1 when none */
static atomic_bool closing = true;      /* the session is over or letting CPUs go: none may join it */
static atomic_uint sessions;            /* sessions begun so far */
static atomic_bool irq_stop_pending;    /* COM2 saw gdb: enter at the end of this interrupt */
static enum stop_reason irq_stop_reason;
static bool enabled;                    /* COM2 is there and gdb= is not off */
static bool stop_on_panic;              /* gdb=panic */
static bool panicked;                   /* a panic handed the machine to the debugger: nobody runs again */

/* The stub's choice for the end of the session (resume()). */
static int resume_step_cpu;
static bool resume_others_stay;

struct sw_break {
    uint64_t addr;
    uint8_t saved;      /* the byte the int3 replaced */
    bool used;
    bool suspended;     /* hit by the debugger's own code: the original byte is back until the next resume */
};
static struct sw_break sw_breaks[SW_BREAK_MAX];

struct hw_break {
    uint64_t addr;
    bool used;
};
static struct hw_break hw_breaks[HW_BREAK_MAX];

/* ---- registers and instructions the C compiler does not reach ------------------------------------------ */

static inline uint64_t read_dr6(void) { uint64_t v; __asm__ volatile("mov %%dr6, %0" : "=r"(v)); return v; }
static inline void write_dr6(uint64_t v) { __asm__ volatile("mov %0, %%dr6" ::"r"(v)); }
static inline uint64_t read_cr0(void) { uint64_t v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline void write_cr0(uint64_t v) { __asm__ volatile("mov %0, %%cr0" ::"r"(v) : "memory"); }

static uint16_t read_seg(enum gdb_reg reg)
{
    uint16_t v = 0;
    switch (reg) {
    case GDB_DS: __asm__ volatile("mov %%ds, %0" : "=r"(v)); break;
    case GDB_ES: __asm__ volatile("mov %%es, %0" : "=r"(v)); break;
    case GDB_FS: __asm__ volatile("mov %%fs, %0" : "=r"(v)); break;
    case GDB_GS: __asm__ volatile("mov %%gs, %0" : "=r"(v)); break;
    default: break;
    }
    return v;
}

/* Every CPU runs with the same debug registers: the hardware breakpoints' addresses, enabled as execution
 * breakpoints (R/W 00, length 00) in DR7. Loaded by each CPU for itself as it resumes. */
static void load_debug_regs(void)
{
    uint64_t dr7 = DR7_RESERVED_ONE;
    uint64_t addr[HW_BREAK_MAX];
    for (unsigned i = 0; i < HW_BREAK_MAX; i++) {
        addr[i] = hw_breaks[i].used ? hw_breaks[i].addr : 0;
        if (hw_breaks[i].used)
            dr7 |= 3ull << (2 * i); /* local and global enable */
    }
    __asm__ volatile("mov %0, %%dr7" ::"r"(DR7_RESERVED_ONE)); /* none match while the addresses change */
    __asm__ volatile("mov %0, %%dr0" ::"r"(addr[0]));
    __asm__ volatile("mov %0, %%dr1" ::"r"(addr[1]));
    __asm__ volatile("mov %0, %%dr2" ::"r"(addr[2]));
    __asm__ volatile("mov %0, %%dr3" ::"r"(addr[3]));
    __asm__ volatile("mov %0, %%dr7" ::"r"(dr7));
}

/* ---- memory that cannot fault ---------------------------------------------------------------------------- */

static bool canonical(uint64_t addr) { return (uint64_t)((int64_t)(addr << 16) >> 16) == addr; }

/* Looks addr up in the live page tables: false when any level is not present; else *end is the end of the
 * page that maps it and *writable whether every level allows writes. The tables themselves are reached
 * through the identity map that holds them (the boot page tables in the kernel image). */
static bool page_lookup(uint64_t addr, uint64_t *end, bool *writable)
{
    if (!canonical(addr))
        return false;
    uint64_t table = read_cr3() & PTE_ADDR;
    bool w = true;
    for (int level = 4; level >= 1; level--) {
        unsigned shift = 12 + 9 * (unsigned)(level - 1);
        const volatile uint64_t *entries = (const volatile uint64_t *)(uintptr_t)table;
        uint64_t e = entries[(addr >> shift) & 511];
        if (!(e & PTE_PRESENT))
            return false;
        w = w && (e & PTE_WRITABLE);
        if (level == 1 || ((level == 2 || level == 3) && (e & PTE_LARGE))) {
            uint64_t size = 1ull << shift;
            *end = (addr & ~(size - 1)) + size;
            *writable = w;
            return true;
        }
        table = e & PTE_ADDR;
    }
    return false;
}

/* Whether [addr, addr + len) is mapped (and writable, when write): page by page, before anything is touched. */
static bool range_ok(uint64_t addr, size_t len, bool write)
{
    if (len == 0)
        return canonical(addr);
    uint64_t last = addr + len - 1;
    if (last < addr || !canonical(last))
        return false;
    for (uint64_t a = addr;;) {
        uint64_t end;
        bool w;
        if (!page_lookup(a, &end, &w) || (write && !w))
            return false;
        if (end == 0 || end > last)
            return true;
        a = end;
    }
}

static struct sw_break *sw_break_find(uint64_t addr)
{
    for (unsigned i = 0; i < SW_BREAK_MAX; i++)
        if (sw_breaks[i].used && sw_breaks[i].addr == addr)
            return &sw_breaks[i];
    return 0;
}

static bool t_mem_read(uint64_t addr, void *buf, size_t len)
{
    if (!range_ok(addr, len, false))
        return false;
    uint8_t *out = buf;
    for (size_t i = 0; i < len; i++)
        out[i] = ((const volatile uint8_t *)(uintptr_t)addr)[i];
    /* gdb sees the code, not the int3 bytes standing in for it. */
    for (unsigned i = 0; i < SW_BREAK_MAX; i++) {
        struct sw_break *b = &sw_breaks[i];
        if (b->used && !b->suspended && b->addr >= addr && b->addr - addr < len)
            out[b->addr - addr] = b->saved;
    }
    return true;
}

static bool t_mem_write(uint64_t addr, const void *buf, size_t len)
{
    if (!range_ok(addr, len, true))
        return false;
    const uint8_t *in = buf;
    for (size_t i = 0; i < len; i++) {
        struct sw_break *b = sw_break_find(addr + i);
        if (b && !b->suspended)
            b->saved = in[i]; /* under an inserted breakpoint: the byte it restores on removal */
        else
            ((volatile uint8_t *)(uintptr_t)addr)[i] = in[i];
    }
    return true;
}

/* One byte of code, on a present page: through CR0.WP cleared for the write if the page is read-only.
 * Interrupts are off on the CPU doing it (a session or a parked CPU). */
static bool poke_text(uint64_t addr, uint8_t byte)
{
    uint64_t end;
    bool w;
    if (!page_lookup(addr, &end, &w))
        return false;
    uint64_t cr0 = read_cr0();
    if (!w)
        write_cr0(cr0 & ~CR0_WP);
    *(volatile uint8_t *)(uintptr_t)addr = byte;
    if (!w)
        write_cr0(cr0);
    return true;
}

static bool peek(uint64_t addr, uint8_t *byte)
{
    uint64_t end;
    bool w;
    if (!page_lookup(addr, &end, &w))
        return false;
    *byte = *(const volatile uint8_t *)(uintptr_t)addr;
    return true;
}

static bool t_sw_break_insert(uint64_t addr)
{
    struct sw_break *b = sw_break_find(addr);
    if (b)
        return true;
    for (unsigned i = 0; i < SW_BREAK_MAX; i++) {
        if (sw_breaks[i].used)
            continue;
        uint8_t old;
        if (!peek(addr, &old) || !poke_text(addr, 0xCC))
            return false;
        sw_breaks[i] = (struct sw_break){ .addr = addr, .saved = old, .used = true };
        return true;
    }
    return false;
}

static bool t_sw_break_remove(uint64_t addr)
{
    struct sw_break *b = sw_break_find(addr);
    if (!b)
        return false;
    if (!b->suspended && !poke_text(addr, b->saved))
        return false;
    b->used = false;
    return true;
}

/* Breakpoints the debugger's own code ran into get their bytes back until the machine resumes. */
static void sw_break_suspend(struct sw_break *b)
{
    if (!b->suspended && poke_text(b->addr, b->saved))
        b->suspended = true;
}

static void sw_breaks_rearm(void)
{
    for (unsigned i = 0; i < SW_BREAK_MAX; i++) {
        struct sw_break *b = &sw_breaks[i];
        if (b->used && b->suspended && poke_text(b->addr, 0xCC))
            b->suspended = false;
    }
}

static bool t_hw_break_insert(uint64_t addr)
{
    if (!canonical(addr))
        return false;
    for (unsigned i = 0; i < HW_BREAK_MAX; i++)
        if (hw_breaks[i].used && hw_breaks[i].addr == addr)
            return true;
    for (unsigned i = 0; i < HW_BREAK_MAX; i++) {
        if (!hw_breaks[i].used) {
            hw_breaks[i] = (struct hw_break){ .addr = addr, .used = true };
            return true;
        }
    }
    return false;
}

static bool t_hw_break_remove(uint64_t addr)
{
    for (unsigned i = 0; i < HW_BREAK_MAX; i++) {
        if (hw_breaks[i].used && hw_breaks[i].addr == addr) {
            hw_breaks[i].used = false;
            return true;
        }
    }
    return false;
}

static bool hw_break_at(uint64_t addr)
{
    for (unsigned i = 0; i < HW_BREAK_MAX; i++)
        if (hw_breaks[i].used && hw_breaks[i].addr == addr)
            return true;
    return false;
}

/* ---- parked CPUs and their mailbox ------------------------------------------------------------------------ */

static uint64_t ms_cycles(unsigned ms) { return (uint64_t)ms * cycles_per_ms(); }

static void mailbox_serve(struct dbg_cpu *c)
{
    if (atomic_load_explicit(&c->mbox, memory_order_acquire) != MBOX_REQUEST)
        return;
    switch (c->op) {
    case OP_RDMSR: c->ok = rdmsr_safe(c->msr, &c->value); break;
    case OP_WRMSR: c->ok = wrmsr_safe(c->msr, c->value); break;
    case OP_CALL: c->fn(c->arg); c->ok = true; break;
    default: c->ok = false; break;
    }
    atomic_store_explicit(&c->mbox, MBOX_DONE, memory_order_release);
}

static void record(struct dbg_cpu *c, struct context *ctx)
{
    c->ctx = ctx;
    c->task = task_current();
    if (!rdmsr_safe(0xC0000100u /* IA32_FS_BASE */, &c->fs_base))
        c->fs_base = 0;
}

/* Whether this CPU runs on its NMI stack: in an NMI handler (or an exception taken inside one), where NMIs
 * stay blocked until the handler's IRET. */
static bool on_nmi_stack(void)
{
    uintptr_t sp = (uintptr_t)read_rsp();
    uintptr_t lo = (uintptr_t)percpu_area[cpu_index()].ist_stacks[IST_NMI - 1];
    return sp >= lo && sp < lo + IST_STACK_SIZE;
}

/* A stopped CPU sleeps in HLT, taking no host CPU under QEMU (three spinning vCPUs made the owner's COM2 I/O
 * four times slower), and the owner wakes it with VEC_GDB_WAKE after each change it must see. While it
 * sleeps interrupts are on but CR8 (the LAPIC task priority) holds back every vector below VEC_GDB_WAKE's
 * class: no tick, no device, no scheduler runs here. The check and the HLT are race-free the usual way: a
 * wake-up arriving after the check is held pending by IF=0 until STI, whose one-instruction shadow covers
 * the HLT. This needs the CPU out of NMI context (the wake-up's IRET would unblock NMIs with the NMI frame
 * still live on the IST stack; gdb_nmi() parks NMI-stopped CPUs off it): on the NMI stack -- a panic under
 * gdb=panic, or the rare stop that could not leave it -- the CPU spins, pausing once every PARK_SPINS polls
 * (under TCG every PAUSE leaves the translated code and takes QEMU's big lock). */
#define PARK_SPINS 1024
#define PARK_TPR_CLASS ((VEC_GDB_WAKE >> 4) - 1)

static inline uint64_t read_cr8(void) { uint64_t v; __asm__ volatile("mov %%cr8, %0" : "=r"(v)); return v; }
static inline void write_cr8(uint64_t v) { __asm__ volatile("mov %0, %%cr8" ::"r"(v) : "memory"); }

static void wake(unsigned cpu) { lapic_send_ipi(cpu_hw_id(cpu), VEC_GDB_WAKE); }

static void unprepare_release(struct dbg_cpu *c);

/* How a CPU came to park. PARK_ASKED: the owner's stop request. PARK_LOSER: a trap of its own while another
 * CPU owned the debugger. Either leaves at once, unseen, when the session it would join is over or already
 * letting CPUs go (`closing`): nobody would release it. PARK_HELD: held for good (a panic) or until the CPU
 * it lets step becomes the owner; it waits whatever happens. */
enum park_mode { PARK_ASKED, PARK_LOSER, PARK_HELD };

/* Stopped: context saved, serving the mailbox, until the owner moves this CPU to RELEASING. False when it
 * left by itself, unseen by any session (see enum park_mode). */
static bool park(struct dbg_cpu *c, struct context *ctx, enum park_mode mode)
{
    c->in_park = true; /* from here on gdb_nmi() leaves a stop request to this function */
    c->depth++;
    record(c, ctx);
    bool sleep = !on_nmi_stack();
    uint64_t tpr = read_cr8();
    if (sleep)
        write_cr8(PARK_TPR_CLASS);
    c->released = false;
    for (;;) {
        atomic_store(&c->state, CPU_PARKED);
        atomic_store(&c->stop_waiting, false); /* parked: any session now sees it so */
        /* Sequentially consistent with the owner's store to `closing` and its load of this state: one of
         * the two sees the other, so a CPU is either released by the owner or leaves here by itself. */
        if (mode != PARK_HELD && (atomic_load(&closing) || atomic_load(&owner) < 0)) {
            int parked = CPU_PARKED;
            atomic_compare_exchange_strong(&c->state, &parked, CPU_RELEASING);
        }
        for (;;) {
            for (unsigned spins = 0; atomic_load(&c->state) == CPU_PARKED; spins++) {
                mailbox_serve(c);
                if (sleep) {
                    if (atomic_load(&c->state) == CPU_PARKED && atomic_load(&c->mbox) != MBOX_REQUEST)
                        __asm__ volatile("sti; hlt; cli" ::: "memory");
                } else if (spins % PARK_SPINS == 0) {
                    pause();
                }
            }
            load_debug_regs();
            int releasing = CPU_RELEASING;
            if (atomic_compare_exchange_strong(&c->state, &releasing, CPU_RUNNING))
                break;
            /* A new session's stop request came while this CPU was leaving (gdb_nmi put it back to
             * PARKED): it stays, with the same context, and what the last release prepared is undone. */
            unprepare_release(c);
        }
        c->in_park = false;
        if (!atomic_exchange(&c->stop_waiting, false))
            break;
        /* A session that began just as this CPU got going: parked again, where it was. */
        c->in_park = true;
        unprepare_release(c);
        mode = PARK_ASKED;
    }
    if (sleep)
        write_cr8(tpr);
    c->depth--;
    return c->released;
}

/* The way out of NMI context for a CPU the owner stopped: the NMI handler copies the interrupted context onto
 * the interrupted code's own stack (below its stack pointer: the kernel has no red zone) and returns -- its
 * IRET unblocking NMIs -- into gdb_park_detour, on that stack with interrupts off, which parks with that copy
 * and, released, resumes it through the interrupt return path (isr_resume pops a struct context). */
__attribute__((used)) void gdb_park_detoured(struct context *saved);
extern const char gdb_park_detour[];
__asm__(".pushsection .text\n"
        ".globl gdb_park_detour\n"
        "gdb_park_detour:\n\t"
        "movq %rsp, %rdi\n\t"
        "call gdb_park_detoured\n\t"
        "jmp isr_resume\n"
        ".popsection\n");

void gdb_park_detoured(struct context *saved) { park(&dcpu[cpu_index()], saved, PARK_ASKED); }

#define DETOUR_GAP 128 /* bytes left untouched below the interrupted stack pointer */

static bool detour(struct context *ctx)
{
    uint64_t sp = ((ctx->rsp - DETOUR_GAP) & ~15ull) - sizeof(struct context);
    uintptr_t lo, hi;
    if (sp > ctx->rsp || !range_ok(sp, sizeof(struct context) + DETOUR_GAP, true) ||
        percpu_ist_bounds((uintptr_t)ctx->rsp, &lo, &hi))
        return false;
    struct context *saved = (struct context *)(uintptr_t)sp;
    *saved = *ctx;
    ctx->rip = (uint64_t)(uintptr_t)gdb_park_detour;
    ctx->rsp = sp;
    ctx->rflags &= ~(uint64_t)(RFLAGS_IF | RFLAGS_TF);
    return true;
}

/* The context of a CPU gdb may look at: the owner's own, or a parked CPU's. */
static struct context *stopped_ctx(unsigned cpu)
{
    if (cpu >= MAX_CPUS || !cpu_online(cpu))
        return 0;
    if ((int)cpu == atomic_load(&owner) && cpu == cpu_index())
        return dcpu[cpu].ctx;
    return atomic_load(&dcpu[cpu].state) == CPU_PARKED ? dcpu[cpu].ctx : 0;
}

/* Runs op on cpu: here when it is this CPU, else through its mailbox while it is parked. */
static bool on_cpu(unsigned cpu, int op, uint32_t msr, uint64_t *value, void (*fn)(void *), void *arg)
{
    if (cpu >= MAX_CPUS || !cpu_online(cpu))
        return false;
    if (cpu == cpu_index()) {
        switch (op) {
        case OP_RDMSR: return rdmsr_safe(msr, value);
        case OP_WRMSR: return wrmsr_safe(msr, *value);
        default: fn(arg); return true;
        }
    }
    struct dbg_cpu *c = &dcpu[cpu];
    if (atomic_load(&c->state) != CPU_PARKED || atomic_load(&c->mbox) != MBOX_IDLE)
        return false;
    c->op = op;
    c->msr = msr;
    c->value = value ? *value : 0;
    c->fn = fn;
    c->arg = arg;
    atomic_store_explicit(&c->mbox, MBOX_REQUEST, memory_order_release);
    wake(cpu);
    uint64_t start = rdtsc(), limit = ms_cycles(MAILBOX_WAIT_MS);
    while (atomic_load_explicit(&c->mbox, memory_order_acquire) != MBOX_DONE) {
        if (rdtsc() - start > limit)
            return false; /* left REQUEST: a CPU that never answers gets no second request */
        pause();
    }
    bool ok = c->ok;
    if (ok && value)
        *value = c->value;
    atomic_store_explicit(&c->mbox, MBOX_IDLE, memory_order_relaxed);
    return ok;
}

/* ---- the target ------------------------------------------------------------------------------------------- */

static unsigned t_cpu_count(void) { return cpu_count(); }

static void t_cpu_describe(unsigned cpu, char *buf, size_t cap)
{
    struct context *ctx = stopped_ctx(cpu);
    struct task *task = ctx ? dcpu[cpu].task : 0;
    if (!ctx)
        ksnprintf(buf, cap, "cpu %u, not stopped", cpu);
    else if (task)
        ksnprintf(buf, cap, "cpu %u, task %s (pid %u)", cpu, task->name, task->pid);
    else
        ksnprintf(buf, cap, "cpu %u", cpu);
}

static uint64_t *gpr(struct context *c, enum gdb_reg reg)
{
    switch (reg) {
    case GDB_RAX: return &c->rax;
    case GDB_RBX: return &c->rbx;
    case GDB_RCX: return &c->rcx;
    case GDB_RDX: return &c->rdx;
    case GDB_RSI: return &c->rsi;
    case GDB_RDI: return &c->rdi;
    case GDB_RBP: return &c->rbp;
    case GDB_RSP: return &c->rsp;
    case GDB_R8: return &c->r8;
    case GDB_R9: return &c->r9;
    case GDB_R10: return &c->r10;
    case GDB_R11: return &c->r11;
    case GDB_R12: return &c->r12;
    case GDB_R13: return &c->r13;
    case GDB_R14: return &c->r14;
    case GDB_R15: return &c->r15;
    case GDB_RIP: return &c->rip;
    default: return 0;
    }
}

/* The registers that are not in the saved frame, or that the kernel fixes: cs/ss from the frame, the data
 * segments (the same on every CPU), the FS base as the CPU had it, the GS base (its struct percpu). */
static bool fixed_reg(unsigned cpu, struct context *c, enum gdb_reg reg, uint64_t *value)
{
    switch (reg) {
    case GDB_CS: *value = c->cs & 0xFFFF; return true;
    case GDB_SS: *value = c->ss & 0xFFFF; return true;
    case GDB_DS: case GDB_ES: case GDB_FS: case GDB_GS: *value = read_seg(reg); return true;
    case GDB_FS_BASE: *value = dcpu[cpu].fs_base; return true;
    case GDB_GS_BASE: *value = (uint64_t)(uintptr_t)&percpu_area[cpu]; return true;
    default: return false;
    }
}

static bool t_reg_read(unsigned cpu, enum gdb_reg reg, uint64_t *value)
{
    struct context *c = stopped_ctx(cpu);
    if (!c)
        return false;
    uint64_t *p = gpr(c, reg);
    if (p) {
        *value = *p;
        return true;
    }
    if (reg == GDB_EFLAGS) {
        *value = c->rflags & 0xFFFFFFFFull;
        return true;
    }
    return fixed_reg(cpu, c, reg, value);
}

static bool t_reg_write(unsigned cpu, enum gdb_reg reg, uint64_t value)
{
    struct context *c = stopped_ctx(cpu);
    if (!c)
        return false;
    uint64_t *p = gpr(c, reg);
    if (p) {
        *p = value;
        return true;
    }
    if (reg == GDB_EFLAGS) {
        /* Bit 1 is always one; the kernel runs at IOPL 0 and without VM86 (bits 12-13, 17). */
        c->rflags = (value & 0xFFFFFFFFull & ~0x23000ull) | 0x2;
        return true;
    }
    /* Segments and bases are the kernel's own: a write that changes nothing (gdb's `G` sends them all) is
     * accepted, any other refused -- a wrong CS or GS base would crash the CPU on resume. */
    uint64_t cur;
    if (!fixed_reg(cpu, c, reg, &cur))
        return false;
    return value == cur;
}

static void t_resume(int step_cpu, bool others_stay)
{
    resume_step_cpu = step_cpu;
    resume_others_stay = others_stay;
}

static bool t_msr_read(unsigned cpu, uint32_t msr, uint64_t *value)
{
    return on_cpu(cpu, OP_RDMSR, msr, value, 0, 0);
}

static bool t_msr_write(unsigned cpu, uint32_t msr, uint64_t value)
{
    return on_cpu(cpu, OP_WRMSR, msr, &value, 0, 0);
}

static void describe_pmu_here(void *arg) { pmu_describe_cpu(arg); }

static void t_pmu_report(void (*out)(void *arg, const char *text), void *arg)
{
    static char buf[1536];
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, sizeof buf);
    const char *source = pmu_source_name();
    sink_printf(&bs.sink, "pmu: %s; %s\n", source ? source : "profile samples on the tick", pmu_verdict_reason());
    out(arg, buf);
    for (unsigned cpu = 0; cpu < cpu_count(); cpu++) {
        buffer_sink_init(&bs, buf, sizeof buf);
        if (!on_cpu(cpu, OP_CALL, 0, 0, describe_pmu_here, &bs.sink))
            sink_printf(&bs.sink, "cpu %u: not stopped, its MSRs cannot be read\n", cpu);
        out(arg, buf);
    }
}

/* Power off; where ACPI cannot, halt here with every other CPU parked for good. (No message: a parked CPU
 * may hold the console lock.) */
static void t_kill(void)
{
    platform_poweroff();
    panicked = true;
    platform_halt_forever();
}

static const struct gdb_target target = {
    .cpu_count = t_cpu_count,
    .cpu_describe = t_cpu_describe,
    .reg_read = t_reg_read,
    .reg_write = t_reg_write,
    .mem_read = t_mem_read,
    .mem_write = t_mem_write,
    .sw_break_insert = t_sw_break_insert,
    .sw_break_remove = t_sw_break_remove,
    .hw_break_insert = t_hw_break_insert,
    .hw_break_remove = t_hw_break_remove,
    .resume = t_resume,
    .msr_read = t_msr_read,
    .msr_write = t_msr_write,
    .pmu_report = t_pmu_report,
    .kill = t_kill,
};

/* ---- stopping and resuming the machine -------------------------------------------------------------------- */

/* Every other online CPU parks: those still running get a stop request and an NMI of their own (not one to
 * all: a parked CPU inside an NMI handler would take a second NMI only after it resumes, and find no request
 * in it). Waits, bounded, until all have parked; one that does not is reported as not stopped. After a
 * panic the panic's own NMI has already sent them here. */
static void stop_others(unsigned me)
{
    unsigned n = cpu_count();
    for (unsigned cpu = 0; cpu < n && !panicked; cpu++) {
        if (cpu == me || !cpu_online(cpu) || atomic_load(&dcpu[cpu].state) == CPU_PARKED)
            continue;
        atomic_store(&dcpu[cpu].stop_req, true);
        lapic_send_nmi(cpu_hw_id(cpu));
    }
    uint64_t start = rdtsc(), limit = ms_cycles(STOP_WAIT_MS);
    for (unsigned cpu = 0; cpu < n; cpu++) {
        if (cpu == me || !cpu_online(cpu))
            continue;
        while (atomic_load(&dcpu[cpu].state) != CPU_PARKED && rdtsc() - start < limit)
            pause();
    }
}

/* The instruction at rip reads or changes IF (cli, sti, pushf, popf, iret, hlt -- after any REX prefix):
 * stepped with interrupts as they are. Every other one is stepped with IF clear, so that a pending interrupt
 * cannot carry the step into its handler or, through the scheduler, to another task. */
static bool touches_if(uint64_t rip)
{
    uint8_t op;
    if (!peek(rip, &op))
        return true;
    if ((op & 0xF0) == 0x40 && !peek(rip + 1, &op))
        return true;
    return op == 0xFA || op == 0xFB || op == 0x9C || op == 0x9D || op == 0xCF || op == 0xF4;
}

/* A parked CPU's (or the owner's) context as it is to run again: RF over a hardware breakpoint at its rip (or
 * it would match again at once), TF for a single step. A release without a step leaves the step state alone:
 * it may belong to an outer context of this CPU (one stopped again on its way out of the debugger), whose
 * #DB then finds it -- stale, since a session began after it -- and gives IF back. */
static void prepare_release(struct dbg_cpu *c, bool step)
{
    struct context *ctx = c->ctx;
    if (hw_break_at(ctx->rip))
        ctx->rflags |= RFLAGS_RF;
    if (!step)
        return;
    c->stepping = true;
    c->step_ctx = ctx;
    c->step_session = atomic_load(&sessions);
    c->step_cleared_if = false;
    ctx->rflags |= RFLAGS_TF;
    if ((ctx->rflags & RFLAGS_IF) && !touches_if(ctx->rip)) {
        ctx->rflags &= ~(uint64_t)RFLAGS_IF;
        c->step_cleared_if = true;
    }
}

/* The release prepared for a CPU that is held after all: its context as it was when it stopped. */
static void unprepare_release(struct dbg_cpu *c)
{
    struct context *ctx = c->ctx;
    ctx->rflags &= ~(uint64_t)RFLAGS_RF;
    if (c->stepping && c->step_ctx == ctx) {
        ctx->rflags &= ~(uint64_t)RFLAGS_TF;
        if (c->step_cleared_if)
            ctx->rflags |= RFLAGS_IF;
        c->stepping = false;
        c->step_cleared_if = false;
    }
}

/* The owner's part: stop the others, talk to gdb, release who is to run. */
static void session(unsigned me, struct context *ctx, enum stop_reason why)
{
    struct dbg_cpu *c = &dcpu[me];
    c->depth++;
    record(c, ctx);
    atomic_fetch_add(&sessions, 1);
    atomic_store(&closing, false);
    stop_others(me);
    gdb_uart_irq_disable();

    for (;;) {
        resume_step_cpu = -1;
        resume_others_stay = false;
        gdb_stub_session(&target, &gdb_uart_transport, why, me);
        if (!panicked)
            break;
        /* After a panic nothing runs again: each resume ends in a new stop, at the same place. */
        why = GDB_STOP_PANIC;
    }

    int step = resume_step_cpu;
    bool stay = resume_others_stay;
    unsigned n = cpu_count();
    atomic_store(&closing, true);
    for (unsigned cpu = 0; cpu < n; cpu++) {
        struct dbg_cpu *o = &dcpu[cpu];
        if (cpu == me || atomic_load(&o->state) != CPU_PARKED)
            continue;
        if (stay && (int)cpu != step)
            continue;
        prepare_release(o, (int)cpu == step);
        o->released = true;
        atomic_store(&o->state, CPU_RELEASING);
        wake(cpu);
    }

    bool me_runs = !stay || step == (int)me;
    if (me_runs)
        prepare_release(c, step == (int)me);
    sw_breaks_rearm();
    gdb_uart_irq_enable();
    c->depth--;
    atomic_store(&owner, -1);
    if (!me_runs)
        park(c, ctx, PARK_HELD); /* held while another CPU steps; that CPU's #DB makes it the owner */
    load_debug_regs();
}

/* This CPU becomes the owner and runs a session, or -- another CPU owns the debugger -- parks until released;
 * its event (an int3 rewound, a debug-register match) happens again if it still applies. */
static void enter_locked(struct context *ctx, enum stop_reason why)
{
    unsigned me = cpu_index();
    for (;;) {
        int expected = -1;
        if (atomic_compare_exchange_strong(&owner, &expected, (int)me)) {
            atomic_store(&dcpu[me].stop_waiting, false); /* left by a session that is over */
            session(me, ctx, why);
            return;
        }
        if (expected == (int)me)
            return;
        /* Seen stopped by the owner's session, this CPU's event is stale when it is released: gdb heard
         * of another stop, and an int3 or a debug-register match fires again by itself. Not seen -- that
         * session was already letting CPUs go -- it reports its event itself once the lock is free; a
         * session that starts meanwhile stops it here, with this context (gdb_nmi leaves it the request). */
        struct dbg_cpu *c = &dcpu[me];
        atomic_store(&c->stop_waiting, false); /* this session sees it parked; no request left over */
        bool seen = park(c, ctx, PARK_LOSER);
        while (!seen && atomic_load(&owner) >= 0) {
            if (atomic_exchange(&c->stop_waiting, false))
                seen = park(c, ctx, PARK_ASKED);
            else
                pause();
        }
        if (seen)
            return;
        if ((why == GDB_STOP_SW_BREAK && !sw_break_find(ctx->rip)) ||
            (why == GDB_STOP_HW_BREAK && !hw_break_at(ctx->rip)))
            return; /* removed meanwhile: the instruction just runs */
    }
}

/* Any stop of this CPU's own. Until it is back on its way out (trapping), a stop request from another CPU's
 * session -- while it waits for the debugger's lock, or once its own session has let go of it -- is left to
 * it (gdb_nmi), so that it parks with this context, not one inside the debugger. */
static void enter(struct context *ctx, enum stop_reason why)
{
    struct dbg_cpu *c = &dcpu[cpu_index()];
    c->trapping = true;
    enter_locked(ctx, why);
    c->trapping = false;
    if (atomic_exchange(&c->stop_waiting, false))
        park(c, ctx, PARK_ASKED); /* a session that began as this CPU was leaving */
}

bool gdb_exception(struct context *ctx)
{
    if (!enabled)
        return false;
    unsigned me = cpu_index();
    struct dbg_cpu *c = &dcpu[me];
    enum stop_reason why = GDB_STOP_TRAP;

    if (ctx->vector == 3) {
        struct sw_break *b = sw_break_find(ctx->rip - 1);
        if (c->trap_pending) {
            c->trap_pending = false;
            why = c->trap_why;
        } else if (b) {
            ctx->rip--; /* the breakpoint's instruction runs once its byte is back */
            why = GDB_STOP_SW_BREAK;
            if (c->depth) {
                /* The debugger's own code (a parked CPU's mailbox work, the stub) ran into it: it cannot stop
                 * here, so the breakpoint steps aside until the machine resumes. */
                sw_break_suspend(b);
                return true;
            }
        } else if (c->depth) {
            return true;
        } else {
            uint8_t byte;
            if (peek(ctx->rip - 1, &byte) && byte != 0xCC) {
                /* An int3 that is gone: a breakpoint removed while this CPU was on its way here. The
                 * instruction it stood for runs now. */
                ctx->rip--;
                return true;
            }
        }
        /* Anything else is an int3 compiled into the kernel: a stop after it. */
    } else {
        uint64_t dr6 = read_dr6();
        write_dr6(DR6_RESET);
        if (!(dr6 & (DR6_BS | DR6_HIT_MASK)))
            return false;
        if (dr6 & DR6_BS) {
            /* The debugger's step: TF off and IF as it was. gdb waits for it unless a session began since
             * (another stop overtook it); a trap flag that is no step of the debugger's is dropped too. */
            bool current = c->stepping && c->step_session == atomic_load(&sessions);
            ctx->rflags &= ~(uint64_t)RFLAGS_TF;
            if (c->stepping && c->step_cleared_if)
                ctx->rflags |= RFLAGS_IF;
            c->stepping = false;
            c->step_cleared_if = false;
            if (!(dr6 & DR6_HIT_MASK) && (!current || c->depth))
                return true;
            why = GDB_STOP_STEP;
        }
        if (dr6 & DR6_HIT_MASK) {
            why = GDB_STOP_HW_BREAK;
            if (!hw_break_at(ctx->rip) && !(dr6 & DR6_BS)) {
                ctx->rflags |= RFLAGS_RF; /* removed while this CPU was on its way here */
                return true;
            }
        }
        if (c->depth) {
            ctx->rflags |= RFLAGS_RF; /* a hardware breakpoint in the debugger's own path: passed over */
            return true;
        }
    }
    enter(ctx, why);
    return true;
}

bool gdb_nmi(struct context *ctx)
{
    if (!enabled)
        return false;
    struct dbg_cpu *c = &dcpu[cpu_index()];
    if (!atomic_exchange(&c->stop_req, false))
        return false;
    /* A request whose session is over, or one that found this CPU parked already (it stopped on a
     * breakpoint of its own while the owner was asking): nothing more to do. */
    if (atomic_load(&owner) < 0 || atomic_load(&c->state) == CPU_PARKED)
        return true;
    /* On its way into the debugger with a stop of its own (enter()): it parks there, with that stop's
     * context, rather than here with one inside the debugger's code. */
    if (c->trapping && !c->in_park) {
        atomic_store(&c->stop_waiting, true);
        return true;
    }
    /* In park(): on its way out after the last release, it stays parked where it was; just arriving, or
     * already past its release, it parks (again) before leaving park(). */
    if (c->in_park) {
        int releasing = CPU_RELEASING;
        if (!atomic_compare_exchange_strong(&c->state, &releasing, CPU_PARKED))
            atomic_store(&c->stop_waiting, true);
        return true;
    }
    if (!detour(ctx))
        park(c, ctx, PARK_ASKED);
    return true;
}

void gdb_panic_park(struct context *ctx)
{
    if (!enabled || !stop_on_panic)
        return;
    struct dbg_cpu *c = &dcpu[cpu_index()];
    atomic_store(&c->stop_req, false);
    for (;;)
        park(c, ctx, PARK_HELD);
}

void gdb_request_stop(bool interrupt)
{
    irq_stop_reason = interrupt ? GDB_STOP_INTERRUPT : GDB_STOP_ATTACH;
    atomic_store(&irq_stop_pending, true);
}

void gdb_after_irq(struct context *ctx)
{
    if (!atomic_load_explicit(&irq_stop_pending, memory_order_relaxed))
        return;
    atomic_store(&irq_stop_pending, false);
    enter(ctx, irq_stop_reason);
}

/* The debugger's own stop at this point of the kernel: an int3 the #BP handler recognises, so that the
 * session sees a real interrupted context (this function's registers). */
static void trap(enum stop_reason why)
{
    struct dbg_cpu *c = &dcpu[cpu_index()];
    c->trap_why = why;
    c->trap_pending = true;
    __asm__ volatile("int3" ::: "memory");
}

void gdb_panic_enter(const struct context *ctx)
{
    if (!enabled || !stop_on_panic)
        return;
    unsigned me = cpu_index();
    /* Panicking inside a session on this CPU: the debugger itself broke, nothing to hand over to. Another
     * CPU's session is over: the panic's NMI parked that CPU. */
    if (atomic_exchange(&owner, (int)me) == (int)me)
        return;
    panicked = true;
    if (ctx) {
        session(me, (struct context *)ctx, GDB_STOP_PANIC);
    } else {
        atomic_store(&owner, -1);
        trap(GDB_STOP_PANIC);
    }
    platform_halt_forever();
}

/* ---- boot -------------------------------------------------------------------------------------------------- */

static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = p;
        while (*end && *end != ',')
            end++;
        if ((size_t)(end - p) == n && strncmp(p, word, n) == 0)
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

void gdb_init(void)
{
    const char *opt = cmdline_get("gdb");
    bool wait = false, off = false;
    if (opt) {
        wait = word_in(opt, "wait");
        stop_on_panic = word_in(opt, "panic");
        off = word_in(opt, "off");
        if (!wait && !stop_on_panic && !off)
            log_warn("gdb: unknown gdb=%.32s (wait, panic, wait,panic or off): ignored", opt);
    }
    if (off) {
        stop_on_panic = false;
        return;
    }
    if (!gdb_uart_init()) {
        if (wait || stop_on_panic)
            log_warn("gdb: no UART at COM2 (0x2f8): no debugger");
        return;
    }
    enabled = true;
    gdb_uart_irq_enable();
    if (wait) {
        log_info("gdb: waiting for gdb on COM2");
        trap(GDB_STOP_ATTACH);
    }
}
