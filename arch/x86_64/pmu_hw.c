/* arch/x86_64/pmu_hw.c: the real hardware behind arch/x86_64/pmu_hw.h -- fault-tolerant RDMSR/WRMSR through
 * the exception-fixup table, CPUID, the LVT performance-counter entry through the xAPIC MMIO window (QEMU's TCG
 * has no x2APIC), RDTSC and the CPU index. Host tests replace this file with tests/unit/fake_cpu.c. */
#include "arch/x86_64/pmu_hw.h"

#include "arch/x86_64/arch.h"
#include "arch/x86_64/fixup.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"

#define LAPIC_LVT_PERFCNT 0x340

/* The error flag is set before the instruction and cleared by the one after it; a fault lands past the
 * clear (the fixup table entry {1b, 2b}), so the flag says whether the access completed. RDMSR and WRMSR leave
 * EDX:EAX alone when they fault, and the exception path restores every general register, so nothing else
 * changes. The flag is an early-clobber output so the compiler never gives it ECX, EAX or EDX. */
bool pmu_hw_rdmsr(uint32_t msr, uint64_t *v)
{
    uint32_t lo = 0, hi = 0;
    uint32_t fault;
    __asm__ volatile("movl $1, %[fault]\n\t"
                     "1: rdmsr\n\t"
                     "xorl %[fault], %[fault]\n\t"
                     "2:\n\t"
                     EX_TABLE_ENTRY("1b", "2b")
                     : [fault] "=&r"(fault), "+a"(lo), "+d"(hi)
                     : "c"(msr)
                     : "memory");
    if (fault)
        return false;
    *v = ((uint64_t)hi << 32) | lo;
    return true;
}

bool pmu_hw_wrmsr(uint32_t msr, uint64_t v)
{
    uint32_t fault;
    __asm__ volatile("movl $1, %[fault]\n\t"
                     "1: wrmsr\n\t"
                     "xorl %[fault], %[fault]\n\t"
                     "2:\n\t"
                     EX_TABLE_ENTRY("1b", "2b")
                     : [fault] "=&r"(fault)
                     : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
                     : "memory");
    return !fault;
}

void pmu_hw_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) { cpuid(leaf, sub, r); }

/* The same identity-mapped window arch/x86_64/lapic.c uses; this entry is per CPU, so each CPU writes its own. */
static volatile uint32_t *lvt_perfcnt(void)
{
    return (volatile uint32_t *)((uintptr_t)acpi.lapic_phys + LAPIC_LVT_PERFCNT);
}

void pmu_hw_lvtpc_write(uint32_t value) { *lvt_perfcnt() = value; }
uint32_t pmu_hw_lvtpc_read(void) { return *lvt_perfcnt(); }

uint64_t pmu_hw_cycles(void) { return rdtsc(); }

unsigned pmu_hw_cpu(void) { return cpu_index(); }
