/* arch/x86_64/cpu_identity.h: who the CPU says it is (arch/x86_64/cpu_identity.c) -- CPUID's vendor string,
 * family, model and stepping, brand string and the hypervisor's signature. The real answers, never the ones
 * pmu=claim-* makes up: read through pmu_hw_cpuid, so the host's fake CPU answers in the unit tests. */
#ifndef ARCH_X86_64_CPU_IDENTITY_H
#define ARCH_X86_64_CPU_IDENTITY_H

struct sink;

#define CPU_VENDOR_ID_SIZE 13 /* twelve characters and the terminator */

/* CPUID leaf 0's vendor string ("GenuineIntel", "AuthenticAMD", "HygonGenuine", ...). */
void cpu_vendor_id(char out[CPU_VENDOR_ID_SIZE]);

/* lscpu's first lines: vendor, model name (when the brand string is there), family/model/stepping as the
 * vendors decode them, and the hypervisor's signature or "none". */
void cpu_identity_describe(struct sink *out);

#endif
