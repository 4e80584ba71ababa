/* arch/x86_64/interrupts.c: the IDT and interrupt_dispatch, where every vector lands: exceptions (which panic
 * with registers and a backtrace; breakpoints and steps go to the gdb stub), NMIs (a stop request from a
 * panicking CPU or the debugger, a counter overflow, or a genuine NMI), the LAPIC
 * timer (profiler tick, then the scheduler), the yield vector, and device IRQs routed through the IOAPIC. */
#include <stdatomic.h>

#include "arch/x86_64/arch.h"
#include "arch/x86_64/fixup.h"
#include "arch/x86_64/gdb.h"
#include "hal/pmu.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"
#include "hal/context.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "kernel/sink.h"
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
};
static struct device_irq device_irqs[VEC_DEVICE_LAST - VEC_DEVICE_BASE + 1];
static atomic_uint next_device_vector = VEC_DEVICE_BASE;

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

static bool attach_vector(uint32_t gsi, bool level, bool active_low, irq_handler_fn handler, void *arg)
{
    unsigned vector = atomic_fetch_add(&next_device_vector, 1);
    if (vector > VEC_DEVICE_LAST)
        return false;
    device_irqs[vector - VEC_DEVICE_BASE] = (struct device_irq){ handler, arg };
    ioapic_route(gsi, (uint8_t)vector, level, active_low, percpu_area[0].apic_id);
    return true;
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
    return attach_vector(gsi, level, active_low, handler, arg);
}

bool irq_attach_gsi_level(unsigned gsi, irq_handler_fn handler, void *arg)
{
    return attach_vector(gsi, true, true, handler, arg);
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

static void exception(struct context *ctx)
{
    /* Breakpoints, single steps and debug-register hits belong to the gdb stub when it is there. */
    if ((ctx->vector == 1 || ctx->vector == 3) && gdb_exception(ctx))
        return;
    /* An instruction that declared it may fault (fault-tolerant MSR access) resumes at its landing address;
     * its caller learns of the fault from its result. */
    if (exception_fixup(ctx))
        return;
    const char *name = exception_names[ctx->vector & 31];
    if (ctx->vector == 14) {
        uint64_t err = ctx->error_code;
        panic_at(ctx, "%s at 0x%llx (%s, %s)", name, (unsigned long long)read_cr2(),
                 err & 2 ? "write" : "read", err & 1 ? "protection violation" : "not present");
    }
    panic_at(ctx, "%s, error code 0x%llx", name, (unsigned long long)ctx->error_code);
}

static void nmi(struct context *ctx)
{
    /* A panicking CPU stops the others with an NMI: they halt here, interrupts off, for good -- or, under
     * gdb=panic, park for the debugger with their registers saved. */
    if (panic_active()) {
        gdb_panic_park(ctx);
        platform_halt_forever();
    }
    /* The debugger stopping every CPU: checked before the counter's claim, which would not recognise it. */
    if (gdb_nmi(ctx))
        return;
    /* The performance counter's overflow, already acknowledged and re-armed: take the sample (dropped when
     * no run is active). Anything else is a genuine NMI, and it is not swallowed. */
    if (pmu_nmi_is_mine()) {
        profiler_sample(ctx);
        return;
    }
    panic_at(ctx, "NMI received: a genuine NMI, not claimed by any kprof source");
}

struct context *interrupt_dispatch(struct context *ctx)
{
    uint64_t vector = ctx->vector;

    if (vector == VEC_TIMER) {
        lapic_eoi();
        profiler_tick(ctx);
        return sched_tick(ctx);
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
    if (vector == 2) {
        nmi(ctx);
        return ctx;
    }
    if (vector < 32)
        exception(ctx);
    /* Spurious LAPIC (no EOI) and the masked 8259s' spurious IRQ7/15: nothing to do. */
    return ctx;
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
