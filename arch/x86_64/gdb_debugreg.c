/* arch/x86_64/gdb_debugreg.c: the x86 debug machinery under the stop/resume state machine -- #BP and #DB
 * decoded into what gdbstub/stop.c takes (a breakpoint instruction at an address; a step completed, which
 * debug registers matched), the debug registers loaded from the breakpoint table -- execution breakpoints
 * and write or access watchpoints -- and disarmed while stopped, and the flags a resumed context carries: TF
 * for a single step (with IF held clear for it), RF to pass over a hardware breakpoint. */
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/x86.h"
#include "gdbstub/breakpoints.h"
#include "hal/cpu.h"

#define RFLAGS_TF (1ull << 8)
#define RFLAGS_RF (1ull << 16)
#define DR6_HIT_MASK 0xFull     /* B0..B3: which debug register matched */
#define DR6_BS (1ull << 14)     /* single step */
#define DR6_RESET 0xFFFF0FF0ull /* the value that clears every status bit */
#define DR7_RESERVED_ONE (1ull << 10)

_Static_assert(GDB_X86_HW_BREAKS == 4, "DR0..DR3");

static inline uint64_t read_dr6(void) { uint64_t v; __asm__ volatile("mov %%dr6, %0" : "=r"(v)); return v; }
static inline void write_dr6(uint64_t v) { __asm__ volatile("mov %0, %%dr6" ::"r"(v)); }
static inline uint64_t read_dr7(void) { uint64_t v; __asm__ volatile("mov %%dr7, %0" : "=r"(v)); return v; }

/* The B0..B3 bits of the debug registers DR7 enables (local or global). */
static uint64_t enabled_slots(uint64_t dr7)
{
    uint64_t mask = 0;
    for (unsigned i = 0; i < GDB_X86_HW_BREAKS; i++)
        if (dr7 & (3ull << (2 * i)))
            mask |= 1ull << i;
    return mask;
}

bool gdb_x86_hw_break_valid(uint64_t addr) { return gdb_x86_canonical(addr); }

/* DR7's R/W field (bits 16 + 4i) for a slot's kind -- 00 execution, 01 writes, 11 reads and writes -- and its
 * LEN field (bits 18 + 4i): 00 one byte, 01 two, 11 four, 10 eight (SDM vol. 3, 18.2.4). */
static uint64_t dr7_kind(unsigned slot, const struct gdb_hw_slot *h)
{
    uint64_t rw = h->type == GDB_WATCH_WRITE ? 1 : h->type == GDB_WATCH_ACCESS ? 3 : 0;
    uint64_t len = 0;
    if (rw != 0)
        len = h->len == 2 ? 1 : h->len == 4 ? 3 : h->len == 8 ? 2 : 0;
    return (rw | len << 2) << (16 + 4 * slot);
}

/* What each CPU last loaded into DR7 (DR7_RESERVED_ONE, or 0 before its first load: nothing enabled), so that
 * its NMI handler knows without reading DR7 -- a debug-register access is a VM exit under most hypervisors. */
static uint64_t dr7_loaded[MAX_CPUS];

static void set_dr7(uint64_t dr7)
{
    unsigned cpu = cpu_index();
    if (cpu < MAX_CPUS)
        dr7_loaded[cpu] = dr7;
    __asm__ volatile("mov %0, %%dr7" ::"r"(dr7));
}

/* Whether dr7 enables any breakpoint or watchpoint (L0..L3, G0..G3). */
static bool dr7_enables(uint64_t dr7) { return (dr7 & 0xFF) != 0; }

void gdb_x86_debug_regs_pause(void)
{
    unsigned cpu = cpu_index();
    if (cpu < MAX_CPUS && dr7_enables(dr7_loaded[cpu]))
        __asm__ volatile("mov %0, %%dr7" ::"r"(DR7_RESERVED_ONE));
}

void gdb_x86_debug_regs_resume(void)
{
    /* What this CPU loaded last: the table it ran with, or a newer one if the debugger parked it meanwhile. */
    unsigned cpu = cpu_index();
    if (cpu < MAX_CPUS && dr7_enables(dr7_loaded[cpu]))
        __asm__ volatile("mov %0, %%dr7" ::"r"(dr7_loaded[cpu]));
}

/* Every CPU runs with the same debug registers: the table's slot i in DRi, enabled (local and global) in
 * DR7 with its kind and length. Loaded by each CPU for itself as it resumes. */
void gdb_x86_load_debug_regs(void)
{
    uint64_t dr7 = DR7_RESERVED_ONE;
    uint64_t addr[GDB_X86_HW_BREAKS];
    for (unsigned i = 0; i < GDB_X86_HW_BREAKS; i++) {
        struct gdb_hw_slot h;
        addr[i] = 0;
        if (gdb_break_hw_slot(i, &h)) {
            addr[i] = h.addr;
            dr7 |= 3ull << (2 * i) | dr7_kind(i, &h);
        }
    }
    gdb_x86_disarm_debug_regs(); /* none match while the addresses change */
    __asm__ volatile("mov %0, %%dr0" ::"r"(addr[0]));
    __asm__ volatile("mov %0, %%dr1" ::"r"(addr[1]));
    __asm__ volatile("mov %0, %%dr2" ::"r"(addr[2]));
    __asm__ volatile("mov %0, %%dr3" ::"r"(addr[3]));
    set_dr7(dr7);
}

/* Stopped, a CPU matches nothing: gdb's own reads and writes through the stub (a watched variable set with
 * `print x = 1`) must not trap inside it. The registers come back as the CPU resumes. */
void gdb_x86_disarm_debug_regs(void)
{
    set_dr7(DR7_RESERVED_ONE);
}

bool gdb_exception(struct context *ctx)
{
    if (!gdb_stop_enabled())
        return false;
    if (ctx->vector == 3)
        return gdb_stop_breakpoint_insn(ctx, ctx->rip - 1); /* #BP is a trap: rip is past the int3 */
    uint64_t dr6 = read_dr6();
    write_dr6(DR6_RESET);
    if (!(dr6 & (DR6_BS | DR6_HIT_MASK)))
        return false;
    /* A B bit counts only for a debug register enabled in DR7: the CPU may set one for any register whose
     * address matches, enabled or not (QEMU does, on a single-step trap), and a breakpoint gdb removed keeps
     * its address in DR0..3 -- a stale step landing there looked like a hit of the removed breakpoint. */
    uint64_t hits = dr6 & DR6_HIT_MASK & enabled_slots(read_dr7());
    if (!(dr6 & DR6_BS) && !hits)
        return true; /* only a disabled register matched: nothing happened */
    return gdb_stop_debug_trap(ctx, dr6 & DR6_BS, (unsigned)hits);
}

/* The instruction at rip reads or changes IF (cli, sti, pushf, popf, iret, hlt -- after any REX prefix):
 * stepped with interrupts as they are. Every other one is stepped with IF clear, so that a pending interrupt
 * cannot carry the step into its handler or, through the scheduler, to another task. */
static bool touches_if(uint64_t rip)
{
    uint8_t op;
    if (!gdb_x86_peek(rip, &op))
        return true;
    if ((op & 0xF0) == 0x40 && !gdb_x86_peek(rip + 1, &op))
        return true;
    return op == 0xFA || op == 0xFB || op == 0x9C || op == 0x9D || op == 0xCF || op == 0xF4;
}

bool gdb_x86_step_begin(struct context *ctx)
{
    ctx->rflags |= RFLAGS_TF;
    if ((ctx->rflags & RFLAGS_IF) && !touches_if(ctx->rip)) {
        ctx->rflags &= ~(uint64_t)RFLAGS_IF;
        return true;
    }
    return false;
}

void gdb_x86_step_end(struct context *ctx, bool unmask)
{
    ctx->rflags &= ~(uint64_t)RFLAGS_TF;
    if (unmask)
        ctx->rflags |= RFLAGS_IF;
}

void gdb_x86_skip_hw_break(struct context *ctx, bool skip)
{
    if (skip)
        ctx->rflags |= RFLAGS_RF;
    else
        ctx->rflags &= ~(uint64_t)RFLAGS_RF;
}

void gdb_x86_set_pc(struct context *ctx, uint64_t addr) { ctx->rip = addr; }

void gdb_x86_trap(void) { __asm__ volatile("int3" ::: "memory"); }
