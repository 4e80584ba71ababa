/* arch/x86_64/gdb_nmi.c: how the debugger stops and parks x86 CPUs. The leader stops a running CPU with an
 * NMI of its own (not one to all: a parked CPU inside an NMI handler would take a second NMI only after it
 * resumes, and find no request in it); the stopped CPU leaves NMI context by a detour before it parks, so
 * that it can sleep in HLT and be woken by an ordinary IPI (VEC_GDB_WAKE). The state machine deciding who
 * parks and who runs is gdbstub/stop.c; this file is the mechanism under it. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/platform.h"

#define RFLAGS_TF (1ull << 8)

void gdb_x86_stop_cpu(unsigned cpu) { lapic_send_nmi(cpu_hw_id(cpu)); }
void gdb_x86_wake_cpu(unsigned cpu) { lapic_send_ipi(cpu_hw_id(cpu), VEC_GDB_WAKE); }

bool gdb_nmi(struct context *ctx) { return gdb_stop_nmi(ctx); }

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
 * still live on the IST stack; gdb_x86_leave_nmi parks NMI-stopped CPUs off it): on the NMI stack -- a panic
 * under gdb=panic, or the rare stop that could not leave it -- the CPU spins, pausing once every PARK_SPINS
 * polls (under TCG every PAUSE leaves the translated code and takes QEMU's big lock). */
#define PARK_SPINS 1024
#define PARK_TPR_CLASS ((VEC_GDB_WAKE >> 4) - 1)

static inline uint64_t read_cr8(void) { uint64_t v; __asm__ volatile("mov %%cr8, %0" : "=r"(v)); return v; }
static inline void write_cr8(uint64_t v) { __asm__ volatile("mov %0, %%cr8" ::"r"(v) : "memory"); }

bool gdb_x86_park_begin(uint64_t *saved_tpr)
{
    bool sleep = !on_nmi_stack();
    *saved_tpr = read_cr8();
    if (sleep)
        write_cr8(PARK_TPR_CLASS);
    return sleep;
}

void gdb_x86_park_idle(bool sleep, unsigned polls)
{
    if (sleep)
        __asm__ volatile("sti; hlt; cli" ::: "memory");
    else if (polls % PARK_SPINS == 0)
        pause();
}

void gdb_x86_park_end(bool sleep, uint64_t saved_tpr)
{
    if (sleep)
        write_cr8(saved_tpr);
}

/* The way out of NMI context for a CPU the owner stopped: the NMI handler copies the interrupted context onto
 * the interrupted code's own stack (below its stack pointer: the kernel has no red zone) and returns -- its
 * IRET unblocking NMIs -- into gdb_park_detour, on that stack with interrupts off, which parks with that copy
 * and, released, resumes it through the interrupt return path (isr_resume pops a struct context). */
extern const char gdb_park_detour[];
__asm__(".pushsection .text\n"
        ".globl gdb_park_detour\n"
        "gdb_park_detour:\n\t"
        "movq %rsp, %rdi\n\t"
        "call gdb_stop_park_detoured\n\t"
        "jmp isr_resume\n"
        ".popsection\n");

#define DETOUR_GAP 128 /* bytes left untouched below the interrupted stack pointer */

bool gdb_x86_leave_nmi(struct context *ctx)
{
    uint64_t sp = ((ctx->rsp - DETOUR_GAP) & ~15ull) - sizeof(struct context);
    uintptr_t lo, hi;
    if (sp > ctx->rsp || !gdb_x86_range_ok(sp, sizeof(struct context) + DETOUR_GAP, true) ||
        percpu_ist_bounds((uintptr_t)ctx->rsp, &lo, &hi))
        return false;
    struct context *saved = (struct context *)(uintptr_t)sp;
    *saved = *ctx;
    ctx->rip = (uint64_t)(uintptr_t)gdb_park_detour;
    ctx->rsp = sp;
    ctx->rflags &= ~(uint64_t)(RFLAGS_IF | RFLAGS_TF);
    return true;
}
