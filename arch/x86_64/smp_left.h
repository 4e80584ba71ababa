/* arch/x86_64/smp_left.h: the boot log's account of the CPUs the firmware listed -- how many started, and of the
 * rest which were left in their reset state and why (past MAX_CPUS, or they did not start) -- as text, so host
 * tests check it at counts no emulator boots. */
#ifndef ARCH_X86_64_SMP_LEFT_H
#define ARCH_X86_64_SMP_LEFT_H

#include <stddef.h>
#include <stdint.h>

/* apic_ids: the MADT's first ACPI_MAX_CPUS entries (of listed); considered: how many of them the start loop
 * went through (those after it were never tried). info gets the count line; warn the line of APIC ids never
 * tried, as ranges, or "" when there are none to name. */
void smp_left_lines(const uint32_t *apic_ids, unsigned listed, unsigned started, unsigned failed,
                    unsigned considered, char *info, size_t info_size, char *warn, size_t warn_size);

#endif
