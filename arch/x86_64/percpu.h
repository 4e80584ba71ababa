/* arch/x86_64/percpu.h: what each CPU keeps for itself -- identity, its GDT and TSS, its interrupt stacks --
 * reached through the GS base so that cpu_index() is one instruction. */
#ifndef ARCH_X86_64_PERCPU_H
#define ARCH_X86_64_PERCPU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/nmi_owner.h"
#include "hal/cpu.h"

#define IST_STACK_SIZE 8192
#define IST_STACKS 3
#define IST_NMI 1
#define IST_DOUBLE_FAULT 2
#define IST_MACHINE_CHECK 3

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __attribute__((packed));

struct percpu {
    struct percpu *self; /* %gs:0 */
    uint64_t index;      /* %gs:8: cpu_index() reads this */
    /* %gs:16, %gs:24: where an exception fixed up inside the NMI handler resumes, for isr.S's return
     * without IRET (an IRET would re-open NMIs while the first is still on its stack) */
    uint64_t resume_rflags;
    uint64_t resume_rip;
    uint32_t apic_id;
    atomic_bool online;
    uint32_t irq_depth;  /* interrupt_dispatch frames on this CPU, NMIs not counted */
    uint32_t nmi_depth;  /* 1 while this CPU runs its NMI handler */
    uint32_t nmi_nested; /* NMIs that arrived while one was being handled: must stay 0 */
    uint32_t selftest;   /* the NMI self-test's stage (arch/x86_64/interrupts.c) */
    atomic_bool port61_owed; /* boot CPU: an NMI a kprof source claimed may hide an external one (interrupts.c) */
    struct nmi_history nmi_history; /* its last NMI, for the next one's owner (arch/x86_64/nmi_owner.h) */
    uint64_t gdt[5];     /* null, code, data, TSS (two slots) */
    struct tss tss;
    /* NMI, double fault, machine check: the boot CPU's are static, an AP's are allocated when it is started,
     * so MAX_CPUS costs nothing for CPUs that never start. */
    uint8_t (*ist_stacks)[IST_STACK_SIZE];
};

extern struct percpu percpu_area[MAX_CPUS];

/* Loads this CPU's GDT, TSS and GS base; called once on each CPU before anything else reads cpu_index(). */
void percpu_install(unsigned index, uint32_t apic_id);
void percpu_set_count(unsigned count);
void percpu_mark_online(unsigned index);

/* Which CPU index an APIC id belongs to; -1 when unknown. */
int percpu_index_of_apic(uint32_t apic_id);

/* Bounds of the interrupt stack that contains sp, for stack walks from NMI/#DF/#MC handlers. */
bool percpu_ist_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi);
/* Whether [lo, hi) overlaps any started CPU's interrupt stacks (the debugger refuses watchpoints there). */
bool percpu_ist_overlaps(uintptr_t lo, uintptr_t hi);

#endif
