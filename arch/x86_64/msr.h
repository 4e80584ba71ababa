/* arch/x86_64/msr.h: fault-safe model-specific register access, for MSRs that may not exist on this CPU or may
 * refuse a value (the PMU's, the debugger's `monitor msr`, FS base). arch/x86_64/msr.c implements them;
 * tests/unit/fake_cpu.c fakes them for host tests. */
#ifndef ARCH_X86_64_MSR_H
#define ARCH_X86_64_MSR_H

#include <stdbool.h>
#include <stdint.h>

/* False when the access faulted (the MSR does not exist, or the value was refused), and then *v is left
 * alone. Any context, NMI included. */
bool rdmsr_safe(uint32_t msr, uint64_t *v);
bool wrmsr_safe(uint32_t msr, uint64_t v);

#endif
