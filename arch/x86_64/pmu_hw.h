/* arch/x86_64/pmu_hw.h: every piece of hardware the PMU backends touch -- MSRs (fault-tolerant, msr.h), CPUID, the
 * LAPIC's LVT performance-counter entry, the TSC and the CPU index -- and nothing else, so that host unit tests
 * can put a stateful fake CPU (tests/unit/fake_cpu.c) in place of arch/x86_64/pmu_hw.c. */
#ifndef ARCH_X86_64_PMU_HW_H
#define ARCH_X86_64_PMU_HW_H

#include <stdbool.h>
#include <stdint.h>

/* MSRs: rdmsr_safe/wrmsr_safe (arch/x86_64/msr.h, fault-tolerant). */
#include "arch/x86_64/msr.h"

/* CPUID leaf/subleaf into r[0..3] = EAX, EBX, ECX, EDX. */
void pmu_hw_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]);

/* The LAPIC's LVT performance-counter entry of this CPU: xAPIC register 0x340, or MSR 0x834 in x2APIC mode. */
void pmu_hw_lvtpc_write(uint32_t value);
uint32_t pmu_hw_lvtpc_read(void);
/* Where that entry is read in the mode the APIC runs in ("x2APIC MSR 0x834", "LAPIC 0x340"), and the mode as
 * the boot log says it ("x2APIC", "xAPIC (no x2APIC in CPUID)"), for lscpu and the debugger. */
const char *pmu_hw_lvtpc_name(void);
const char *pmu_hw_apic_mode(void);

/* The LVT fields the backends use: delivery mode NMI (the vector field is ignored), and the mask bit. */
#define LVT_DELIVERY_NMI 0x400u
#define LVT_DELIVERY_MASK 0x700u
#define LVT_MASK_BIT (1u << 16)

/* The time-stamp counter (RDTSC): the clock that bounds the probe's waits. */
uint64_t pmu_hw_cycles(void);

/* Index of the calling CPU (cpu_index()), stable while interrupts are off. */
unsigned pmu_hw_cpu(void);

#endif
