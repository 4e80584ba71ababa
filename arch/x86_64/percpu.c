/* arch/x86_64/percpu.c: per-CPU identity and descriptor tables. Each CPU gets its own GDT (because the TSS
 * descriptor's busy bit is per CPU) and its own TSS, whose IST slots give NMI, double fault and machine check
 * separate stacks: those can arrive when the current stack is unusable. GS points at the CPU's struct percpu. */
#include "hal/compiler.h"
#include "arch/x86_64/percpu.h"

#include "arch/x86_64/x86.h"
#include "hal/platform.h"
#include "kernel/lib/string.h"

struct percpu percpu_area[MAX_CPUS];
static uint8_t boot_ist_stacks[IST_STACKS][IST_STACK_SIZE] __attribute__((aligned(16)));
static unsigned online_count = 1;
static unsigned configured_count = 1;

static uint64_t tss_descriptor_low(uint64_t base, uint32_t limit)
{
    return (limit & 0xFFFFull) | ((base & 0xFFFFFFull) << 16) | (0x89ull << 40) /* present, 64-bit TSS */
           | ((uint64_t)((limit >> 16) & 0xF) << 48) | (((base >> 24) & 0xFFull) << 56);
}

void percpu_install(unsigned index, uint32_t apic_id)
{
    struct percpu *pc = &percpu_area[index];
    pc->self = pc;
    pc->index = index;
    pc->apic_id = apic_id;
    if (index == 0)
        pc->ist_stacks = boot_ist_stacks; /* an AP's were set by whoever started it */

    memset(&pc->tss, 0, sizeof pc->tss);
    pc->tss.ist[IST_NMI - 1] = (uint64_t)(pc->ist_stacks[0] + IST_STACK_SIZE);
    pc->tss.ist[IST_DOUBLE_FAULT - 1] = (uint64_t)(pc->ist_stacks[1] + IST_STACK_SIZE);
    pc->tss.ist[IST_MACHINE_CHECK - 1] = (uint64_t)(pc->ist_stacks[2] + IST_STACK_SIZE);
    pc->tss.iomap_base = sizeof pc->tss;

    uint64_t base = (uint64_t)&pc->tss;
    pc->gdt[0] = 0;
    pc->gdt[1] = 0x00AF9A000000FFFFull; /* 0x08 kernel code, 64-bit */
    pc->gdt[2] = 0x00CF92000000FFFFull; /* 0x10 kernel data */
    pc->gdt[3] = tss_descriptor_low(base, sizeof pc->tss - 1);
    pc->gdt[4] = base >> 32;

    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) gdtr = { sizeof pc->gdt - 1, (uint64_t)pc->gdt };

    __asm__ volatile(
        "lgdt %0\n\t"
        "pushq %1\n\t"
        "leaq 1f(%%rip), %%rax\n\t"
        "pushq %%rax\n\t"
        "lretq\n"
        "1:\n\t"
        "movw %w2, %%ax\n\t"
        "movw %%ax, %%ds\n\t"
        "movw %%ax, %%es\n\t"
        "movw %%ax, %%ss\n\t"
        "xorw %%ax, %%ax\n\t"
        "movw %%ax, %%fs\n\t"
        "movw %%ax, %%gs\n\t"
        "ltr %w3\n\t"
        :
        : "m"(gdtr), "i"(SEL_KCODE), "r"((uint32_t)SEL_KDATA), "r"((uint32_t)SEL_TSS)
        : "rax", "memory");

    /* Loading %gs cleared the base; set it last. */
    wrmsr(MSR_GS_BASE, (uint64_t)pc);
}

void percpu_set_count(unsigned count) { configured_count = count; }

void percpu_mark_online(unsigned index)
{
    atomic_store(&percpu_area[index].online, true);
    __atomic_fetch_add(&online_count, index == 0 ? 0 : 1, __ATOMIC_SEQ_CST);
}

int percpu_index_of_apic(uint32_t apic_id)
{
    for (unsigned i = 0; i < configured_count; i++)
        if (percpu_area[i].apic_id == apic_id)
            return (int)i;
    return -1;
}

DEBUGGER_TEXT bool percpu_ist_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
    for (unsigned i = 0; i < configured_count; i++) {
        for (int s = 0; s < IST_STACKS && percpu_area[i].ist_stacks; s++) {
            uintptr_t base = (uintptr_t)percpu_area[i].ist_stacks[s];
            if (sp >= base && sp < base + IST_STACK_SIZE) {
                *lo = base;
                *hi = base + IST_STACK_SIZE;
                return true;
            }
        }
    }
    return false;
}

DEBUGGER_TEXT bool percpu_ist_overlaps(uintptr_t lo, uintptr_t hi)
{
    for (unsigned i = 0; i < configured_count; i++) {
        if (!percpu_area[i].ist_stacks)
            continue;
        uintptr_t base = (uintptr_t)percpu_area[i].ist_stacks; /* the three are one allocation */
        if (lo < base + IST_STACKS * IST_STACK_SIZE && hi > base)
            return true;
    }
    return false;
}

/* ---- hal/cpu.h --------------------------------------------------------------------------------------- */

DEBUGGER_TEXT unsigned cpu_index(void)
{
    uint64_t index;
    __asm__ volatile("movq %%gs:8, %0" : "=r"(index));
    return (unsigned)index;
}

DEBUGGER_TEXT unsigned cpu_count(void) { return __atomic_load_n(&online_count, __ATOMIC_ACQUIRE); }

DEBUGGER_TEXT unsigned long irq_save(void)
{
    unsigned long flags = read_rflags();
    cli();
    return flags;
}

DEBUGGER_TEXT void irq_restore(unsigned long flags)
{
    if (flags & RFLAGS_IF)
        sti();
}

bool irq_enabled(void) { return (read_rflags() & RFLAGS_IF) != 0; }

DEBUGGER_TEXT void cpu_relax(void) { pause(); }

DEBUGGER_TEXT uint32_t cpu_hw_id(unsigned index) { return index < MAX_CPUS ? percpu_area[index].apic_id : 0; }

DEBUGGER_TEXT bool cpu_online(unsigned index) { return index < MAX_CPUS && atomic_load(&percpu_area[index].online); }
