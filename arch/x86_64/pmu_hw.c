/* arch/x86_64/pmu_hw.c: the real hardware behind arch/x86_64/pmu_hw.h -- CPUID, the LVT performance-counter entry
 * (through arch/x86_64/lapic.c, in whichever mode it chose: an MSR in x2APIC mode, the MMIO window in xAPIC), RDTSC
 * and the CPU index. Host tests replace this file with tests/unit/fake_cpu.c. */
#include "arch/x86_64/pmu_hw.h"

#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "hal/compiler.h"
#include "hal/cpu.h"

void pmu_hw_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) { cpuid(leaf, sub, r); }

/* This entry is per CPU, so each CPU writes its own. */
NMI_TEXT void pmu_hw_lvtpc_write(uint32_t value) { lapic_lvt_perfcnt_write(value); }
NMI_TEXT uint32_t pmu_hw_lvtpc_read(void) { return lapic_lvt_perfcnt_read(); }
const char *pmu_hw_lvtpc_name(void) { return lapic_lvt_perfcnt_name(); }
const char *pmu_hw_apic_mode(void) { return lapic_mode_text(); }

uint64_t pmu_hw_cycles(void) { return rdtsc(); }

unsigned pmu_hw_cpu(void) { return cpu_index(); }
