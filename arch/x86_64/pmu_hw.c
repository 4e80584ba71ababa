/* arch/x86_64/pmu_hw.c: the real hardware behind arch/x86_64/pmu_hw.h -- CPUID, the LVT performance-counter entry through the xAPIC MMIO window (QEMU's TCG
 * has no x2APIC), RDTSC and the CPU index. Host tests replace this file with tests/unit/fake_cpu.c. */
#include "arch/x86_64/pmu_hw.h"

#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"

#define LAPIC_LVT_PERFCNT 0x340

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
