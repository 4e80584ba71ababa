/* arch/x86_64/interrupts.c: the IDT and interrupt_dispatch, where every vector lands: exceptions (which panic
 * with registers and a backtrace; breakpoints and steps go to the gdb stub), NMIs (a stop request from a
 * panicking CPU or the debugger, a counter overflow, or a genuine NMI), the LAPIC
 * timer (profiler tick, then the scheduler), the profiler's stop request (cpu_send_profiler_stop), the yield
 * vector, and device IRQs routed through the IOAPIC or sent by a PCI function as an MSI. */
#include <stdatomic.h>

#include "arch/x86_64/arch.h"
#include "arch/x86_64/lapic_regs.h"
#include "arch/x86_64/fixup.h"
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/nmi_owner.h"
#include "arch/x86_64/pci_msi.h"
#include "hal/pmu.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"
#include "kernel/lib/format.h"
#include "hal/context.h"
#include "hal/entropy.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "kernel/lib/sink.h"
#include "hal/platform.h"

struct idt_gate {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t offset_mid;
    uint32_t offset_high;
    uint32_t zero;
} __attribute__((packed));

static struct idt_gate idt[256];
extern const uint64_t isr_stub_table[256];

struct device_irq {
    irq_handler_fn handler;
    void *arg;
    uint32_t gsi; /* NO_GSI for an MSI: nothing to route */
    bool level, active_low;
};
#define NO_GSI 0xFFFFFFFFu
static struct device_irq device_irqs[VEC_DEVICE_LAST - VEC_DEVICE_BASE + 1];
static atomic_uint next_device_vector = VEC_DEVICE_BASE;
static uint8_t isa_vectors[16]; /* the vector each ISA IRQ was attached at, 0 when none */

static void idt_set(unsigned vector, uint64_t handler, uint8_t ist)
{
    idt[vector] = (struct idt_gate){
        .offset_low = handler & 0xFFFF,
        .selector = SEL_KCODE,
        .ist = ist,
        .type_attr = 0x8E, /* present, DPL 0, 64-bit interrupt gate: IF cleared on entry */
        .offset_mid = (handler >> 16) & 0xFFFF,
        .offset_high = (uint32_t)(handler >> 32),
    };
}

void idt_init(void)
{
    for (unsigned v = 0; v < 256; v++)
        idt_set(v, isr_stub_table[v], 0);
    idt[2].ist = IST_NMI;
    idt[8].ist = IST_DOUBLE_FAULT;
    idt[18].ist = IST_MACHINE_CHECK;
}

/* The IDT's bytes, [*start, *end): the CPU reads a gate of it on every interrupt and exception (gdb_target.c
 * keeps watchpoints off it). */
void idt_bounds(uint64_t *start, uint64_t *end)
{
    *start = (uint64_t)(uintptr_t)idt;
    *end = *start + sizeof idt;
}

void idt_load(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr = { sizeof idt - 1, (uint64_t)idt };
    __asm__ volatile("lidt %0" ::"m"(idtr));
}

void pic_disable(void)
{
    /* Remap the 8259s away from the exception vectors (the BIOS leaves them on 8-15, where IRQ0 would look
     * like a double fault), then mask every line: the IOAPIC delivers device interrupts. */
    outb(0x20, 0x11);
    outb(0xA0, 0x11);
    outb(0x21, VEC_PIC_BASE);
    outb(0xA1, VEC_PIC_BASE + 8);
    outb(0x21, 4);
    outb(0xA1, 2);
    outb(0x21, 1);
    outb(0xA1, 1);
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
}

/* The vector allocated, its handler in place, 0 when none is left. */
static unsigned claim_vector(uint32_t gsi, bool level, bool active_low, irq_handler_fn handler, void *arg)
{
    unsigned vector = atomic_fetch_add(&next_device_vector, 1);
    if (vector > VEC_DEVICE_LAST)
        return 0;
    device_irqs[vector - VEC_DEVICE_BASE] = (struct device_irq){ handler, arg, gsi, level, active_low };
    return vector;
}

/* The vector allocated and routed to the boot CPU, 0 when none is left. */
static unsigned attach_vector(uint32_t gsi, bool level, bool active_low, irq_handler_fn handler, void *arg)
{
    unsigned vector = claim_vector(gsi, level, active_low, handler, arg);
    if (vector)
        ioapic_route(gsi, (uint8_t)vector, level, active_low, percpu_area[0].apic_id);
    return vector;
}

bool irq_isa_deliver_to(unsigned isa_irq, unsigned cpu, bool as_wake)
{
    if (isa_irq >= 16 || isa_vectors[isa_irq] == 0 || cpu >= MAX_CPUS)
        return false;
    unsigned vector = isa_vectors[isa_irq];
    const struct device_irq *irq = &device_irqs[vector - VEC_DEVICE_BASE];
    uint32_t dest = percpu_area[cpu].apic_id;
    if (dest > XAPIC_MAX_ID) {
        /* The redirection entry's destination is 8 bits (no interrupt remapping here): back to the boot CPU,
         * at its own vector, which every device interrupt reaches. */
        ioapic_route(irq->gsi, (uint8_t)vector, irq->level, irq->active_low, percpu_area[0].apic_id);
        return false;
    }
    ioapic_route(irq->gsi, (uint8_t)(as_wake ? VEC_GDB_WAKE : vector), irq->level, irq->active_low, dest);
    return true;
}

void cpu_send_profiler_stop(unsigned cpu)
{
    if (cpu >= MAX_CPUS || !atomic_load(&percpu_area[cpu].online))
        return;
    /* Interrupts off: the ICR's two writes, with no other IPI sent from this CPU between them. */
    unsigned long flags = irq_save();
    lapic_send_ipi(percpu_area[cpu].apic_id, VEC_PROFILER_STOP);
    irq_restore(flags);
}

bool irq_attach_isa(unsigned isa_irq, irq_handler_fn handler, void *arg)
{
    if (isa_irq >= 16)
        return false;
    uint32_t gsi = isa_irq;
    bool level = false, active_low = false;
    if (acpi.isa_override[isa_irq].present) {
        /* MPS INTI flags: polarity bits 0-1 (3 = active low), trigger bits 2-3 (3 = level). */
        uint16_t flags = acpi.isa_override[isa_irq].flags;
        gsi = acpi.isa_override[isa_irq].gsi;
        active_low = (flags & 3) == 3;
        level = ((flags >> 2) & 3) == 3;
    }
    unsigned vector = attach_vector(gsi, level, active_low, handler, arg);
    isa_vectors[isa_irq] = (uint8_t)vector;
    return vector != 0;
}

bool irq_attach_gsi_level(unsigned gsi, irq_handler_fn handler, void *arg)
{
    return attach_vector(gsi, true, true, handler, arg) != 0;
}

unsigned irq_attach_msi(const struct pci_device *dev, irq_handler_fn handler, void *arg, const char **kind)
{
    /* Judged before a vector is taken, so a refusal spends none. The dispatch path needs nothing more: it calls
     * the handler and EOIs the local APIC, all an edge-triggered message wants (no IOAPIC to acknowledge).
     * MSI first: the same message, without a table in a BAR to map. */
    const char **why = kind;
    struct msi_message msg;
    bool msi = pci_find_capability(dev, PCI_CAP_ID_MSI) != 0;
    if (!msi && !pci_find_capability(dev, PCI_CAP_ID_MSIX)) {
        *why = "it has neither the MSI nor the MSI-X capability";
        return 0;
    }
    if (!msi_compose(VEC_DEVICE_BASE, percpu_area[0].apic_id, &msg)) {
        *why = "the boot CPU's APIC id is above what a message names without interrupt remapping";
        return 0;
    }
    unsigned vector = claim_vector(NO_GSI, false, false, handler, arg);
    if (!vector) {
        *why = "no interrupt vector was left";
        return 0;
    }
    msi_compose((uint8_t)vector, percpu_area[0].apic_id, &msg);
    if (!(msi ? pci_msi_enable : pci_msix_enable)(dev, msg.address, msg.data, why)) {
        device_irqs[vector - VEC_DEVICE_BASE].handler = 0; /* the vector stays spent, never raised */
        return 0;
    }
    *kind = msi ? "MSI" : "MSI-X";
    return vector;
}

static const char *const exception_names[32] = {
    "divide error (#DE)", "debug (#DB)", "NMI", "breakpoint (#BP)", "overflow (#OF)",
    "bound range (#BR)", "invalid opcode (#UD)", "device not available (#NM)", "double fault (#DF)",
    "coprocessor segment overrun", "invalid TSS (#TS)", "segment not present (#NP)",
    "stack fault (#SS)", "general protection (#GP)", "page fault (#PF)", "reserved 15",
    "x87 floating point (#MF)", "alignment check (#AC)", "machine check (#MC)", "SIMD floating point (#XM)",
    "virtualization (#VE)", "control protection (#CP)", "reserved 22", "reserved 23", "reserved 24",
    "reserved 25", "reserved 26", "reserved 27", "hypervisor injection (#HV)", "VMM communication (#VC)",
    "security (#SX)", "reserved 31",
};

static struct percpu *this_percpu(void) { return &percpu_area[cpu_index()]; }

/* Returns true when ctx must be resumed without IRET (see isr.S, resume_in_nmi). */
static bool exception(struct context *ctx)
{
    /* Breakpoints, single steps and debug-register hits belong to the gdb stub when it is there. */
    if ((ctx->vector == 1 || ctx->vector == 3) && gdb_exception(ctx))
        return false;
    /* An instruction that declared it may fault (fault-tolerant MSR access) resumes at its landing address;
     * its caller learns of the fault from its result. Inside the NMI handler the return must not be an
     * IRET: any IRET ends the CPU's NMI blocking, and a second NMI would then land on the same IST stack
     * as the first, still live. */
    if (exception_fixup(ctx)) {
        struct percpu *p = this_percpu();
        if (!p->nmi_depth)
            return false;
        p->resume_rip = ctx->rip;
        p->resume_rflags = ctx->rflags;
        return true;
    }
    const char *name = exception_names[ctx->vector & 31];
    if (ctx->vector == 14) {
        uint64_t err = ctx->error_code;
        panic_at(ctx, "%s at 0x%llx (%s, %s)", name, (unsigned long long)read_cr2(),
                 err & 2 ? "write" : "read", err & 1 ? "protection violation" : "not present");
    }
    panic_at(ctx, "%s, error code 0x%llx", name, (unsigned long long)ctx->error_code);
}

/* The PC's record of an external NMI (a parity or channel-check error: port 0x61 bits 7 and 6), which the
 * chipset routes to the boot CPU. */
static uint8_t port61(void) { return inb(0x61); }

/* A fixup-protected load: *v from addr, false when it faults. The NMI self-test's exception. */
static bool load_may_fault(uint64_t addr, uint64_t *v)
{
    bool ok;
    __asm__ volatile("1: movq (%2), %1\n\t"
                     "movb $1, %0\n\t"
                     "jmp 3f\n\t"
                     "2: movb $0, %0\n\t"
                     "3:\n\t" EX_TABLE_ENTRY("1b", "2b")
                     : "=r"(ok), "=r"(*v)
                     : "r"(addr)
                     : "memory");
    return ok;
}

/* The self-test's NMIs: the first sends itself a second (which must wait: NMIs are blocked), then takes a
 * #GP that the fixup table answers; the second arrives only after the first's IRET. */
enum { SELFTEST_IDLE, SELFTEST_FIRST, SELFTEST_SECOND, SELFTEST_DONE };
static bool selftest_nmi(struct percpu *p)
{
    if (p->selftest == SELFTEST_FIRST) {
        p->selftest = SELFTEST_SECOND;
        lapic_send_nmi(p->apic_id);
        uint64_t v;
        if (load_may_fault(0x8000000000000000ull, &v)) /* non-canonical: #GP */
            p->selftest = SELFTEST_IDLE;             /* no fault: the test proves nothing */
        return true;
    }
    if (p->selftest == SELFTEST_SECOND) {
        p->selftest = SELFTEST_DONE;
        return true;
    }
    return false;
}

static char selftest_result[224];

const char *platform_nmi_selftest(void)
{
    struct percpu *p = this_percpu();
    unsigned long flags = irq_save();
    uint32_t nested_before = p->nmi_nested;
    p->selftest = SELFTEST_FIRST;
    lapic_send_nmi(p->apic_id);
    uint64_t deadline = cycles() + cycles_per_ms() * 100;
    while (p->selftest != SELFTEST_DONE && p->selftest != SELFTEST_IDLE && (int64_t)(cycles() - deadline) < 0)
        pause();
    uint32_t stage = p->selftest;
    p->selftest = SELFTEST_IDLE;
    irq_restore(flags);
    if (p->nmi_nested != nested_before)
        return "FAILED: the second NMI nested inside the first";
    if (stage != SELFTEST_DONE)
        return stage == SELFTEST_IDLE ? "FAILED: the load did not fault" : "FAILED: the second NMI never arrived";
    /* What the boot CPU pays to look for an external NMI: one port read, in an NMI no kprof source claims, or at
     * its next tick after one a source claimed. */
    uint64_t t0 = cycles();
    unsigned reasons = 0;
    for (int i = 0; i < 1000; i++)
        reasons |= inb(0x61) & 0xC0;
    uint64_t ns = (cycles() - t0) * 1000 / cycles_per_ms(); /* for 1000 reads: ns per read */
    ksnprintf(selftest_result, sizeof selftest_result,
              "ok: a #GP fixed up inside the NMI handler kept NMIs blocked; the NMI sent meanwhile arrived after "
              "the handler returned. The external-NMI check costs %llu ns on cpu 0 (port 0x61%s)",
              (unsigned long long)ns, reasons ? ", reporting an error now" : "");
    return selftest_result;
}

/* How long after an NMI's return an NMI it owes may still come (nmi_owner.h): 50 us, a send a few instructions
 * on or a PMI the local APIC is delivering, with room for a hypervisor's exit. */
#define NMI_LATE_WINDOWS_PER_MS 20

/* The NMI's context and entry time, for the sources nmi_owner() asks. */
struct nmi_frame {
    struct context *ctx;
    uint64_t entry;
    struct percpu *p;
};
static bool counter_source(void *arg)
{
    struct nmi_frame *f = arg;
    return profiler_nmi(f->ctx, f->entry);
}
static bool selftest_source(void *arg) { return selftest_nmi(((struct nmi_frame *)arg)->p); }
static bool debugger_source(void *arg) { return gdb_nmi(((struct nmi_frame *)arg)->ctx); }

static __attribute__((noinline)) void nmi(struct context *ctx)
{
    struct nmi_frame frame = { ctx, cycles(), this_percpu() };
    gdb_x86_debug_regs_pause();
    struct percpu *p = frame.p;
    if (p->nmi_depth)
        p->nmi_nested++; /* cannot happen while no IRET runs inside the handler: counted, for the self-test */
    p->nmi_depth++;
    const struct nmi_sources sources = {
        .panicking = panic_active, .counter = counter_source, .selftest = selftest_source,
        .debugger = debugger_source, .port61 = port61, .boot_cpu = cpu_index() == 0, .port61_owed = &p->port61_owed,
        .arg = &frame,
        .at = ctx->rip, .now = frame.entry, .late_window = cycles_per_ms() / NMI_LATE_WINDOWS_PER_MS,
        .history = &p->nmi_history,
    };
    uint8_t port = 0;
    switch (nmi_owner(&sources, &port)) {
    case NMI_PANICKING:
        /* A panicking CPU stops the others with an NMI: they halt here, interrupts off, for good -- or, under
         * gdb=panic, park for the debugger with their registers saved. */
        gdb_panic_park(ctx);
        platform_halt_forever();
    case NMI_EXTERNAL:
        panic_at(ctx, "NMI received: an external NMI (port 0x61 = 0x%02x: %s)", port, nmi_port61_error(port));
    case NMI_GENUINE:
        panic_at(ctx, "NMI received: a genuine NMI, not claimed by any kprof source");
    case NMI_KPROF_CHECK_LATER: /* port61_owed is set: the next tick reads the port */
    case NMI_KPROF:
        break;
    }
    nmi_returning(&p->nmi_history, ctx->rip, cycles()); /* where the debugger left it, if it stopped here */
    p->nmi_depth--;
    gdb_x86_debug_regs_resume();
}

/* The boot CPU's tick after an NMI a kprof source claimed: an external NMI that merged with it left its record
 * in port 0x61, read here once rather than on every counter NMI (a port read is a VM exit under a hypervisor). */
static void external_nmi_check(const struct context *ctx)
{
    uint8_t port;
    const char *error = nmi_port61_owed_check(&this_percpu()->port61_owed, port61, &port);
    if (error)
        panic_at(ctx, "NMI received: an external NMI (port 0x61 = 0x%02x: %s), merged with an NMI kprof claimed; "
                      "seen at the next tick", port, error);
}

bool context_in_interrupt(const struct context *ctx)
{
    /* An NMI is not counted in irq_depth; any other vector counts itself. */
    uint32_t depth = this_percpu()->irq_depth;
    return ctx->vector == 2 ? depth > 0 : depth > 1;
}

static struct context *dispatch(struct context *ctx)
{
    uint64_t vector = ctx->vector;

    if (vector == VEC_TIMER) {
        lapic_eoi();
        entropy_tick(); /* the boot's first ticks' arrival times, for the entropy pool (hal/entropy.h) */
        external_nmi_check(ctx);
        profiler_tick(ctx);
        debugger_timer_poll(); /* gdb.udp: the card polled here while the network task is late */
        gdb_after_irq(ctx);
        return sched_tick(ctx);
    }
    if (vector == VEC_PROFILER_STOP) {
        lapic_eoi();
        profiler_stop_request();
        return ctx;
    }
    if (vector == VEC_YIELD)
        return sched_switch(ctx);
    if (vector == VEC_GDB_WAKE) {
        lapic_eoi(); /* a CPU stopped by the debugger only needed waking from its HLT */
        return ctx;
    }
    if (vector >= VEC_DEVICE_BASE && vector <= VEC_DEVICE_LAST) {
        struct device_irq *irq = &device_irqs[vector - VEC_DEVICE_BASE];
        if (irq->handler)
            irq->handler(irq->arg);
        lapic_eoi();
        gdb_after_irq(ctx); /* COM2's interrupt asked to stop here: gdb attached, or sent Ctrl-C */
        return sched_after_irq(ctx);
    }
    if (vector < 32 && exception(ctx))
        return (struct context *)((uintptr_t)ctx | 1); /* isr.S: resume without IRET */
    /* Spurious LAPIC (no EOI) and the masked 8259s' spurious IRQ7/15: nothing to do. */
    return ctx;
}

struct context *interrupt_dispatch(struct context *ctx)
{
    /* The NMI is kept out of irq_depth, so that the code it interrupted can be told an interrupt handler. */
    if (ctx->vector == 2) {
        nmi(ctx);
        return ctx;
    }
    struct percpu *p = this_percpu();
    p->irq_depth++;
    struct context *next = dispatch(ctx);
    p->irq_depth--;
    return next;
}

void context_print(struct sink *out, const struct context *c)
{
    sink_printf(out, "rax %016llx rbx %016llx rcx %016llx rdx %016llx\n", (unsigned long long)c->rax,
                (unsigned long long)c->rbx, (unsigned long long)c->rcx, (unsigned long long)c->rdx);
    sink_printf(out, "rsi %016llx rdi %016llx rbp %016llx rsp %016llx\n", (unsigned long long)c->rsi,
                (unsigned long long)c->rdi, (unsigned long long)c->rbp, (unsigned long long)c->rsp);
    sink_printf(out, "r8  %016llx r9  %016llx r10 %016llx r11 %016llx\n", (unsigned long long)c->r8,
                (unsigned long long)c->r9, (unsigned long long)c->r10, (unsigned long long)c->r11);
    sink_printf(out, "r12 %016llx r13 %016llx r14 %016llx r15 %016llx\n", (unsigned long long)c->r12,
                (unsigned long long)c->r13, (unsigned long long)c->r14, (unsigned long long)c->r15);
    sink_printf(out, "rip %016llx rflags %08llx cs %04llx ss %04llx cr2 %016llx cr3 %016llx\n",
                (unsigned long long)c->rip, (unsigned long long)c->rflags, (unsigned long long)c->cs,
                (unsigned long long)c->ss, (unsigned long long)read_cr2(), (unsigned long long)read_cr3());
}
