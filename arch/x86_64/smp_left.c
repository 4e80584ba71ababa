/* arch/x86_64/smp_left.c: the words of the boot log's account of CPUs left in their reset state
 * (arch/x86_64/smp_left.h). Pure: it reads the ids it is given and writes two lines. */
#include "arch/x86_64/smp_left.h"

#include "arch/x86_64/arch.h" /* ACPI_MAX_CPUS */
#include "hal/cpu.h"          /* MAX_CPUS */
#include "kernel/lib/format.h"

void smp_left_lines(const uint32_t *apic_ids, unsigned listed, unsigned started, unsigned failed,
                    unsigned considered, char *info, size_t info_size, char *warn, size_t warn_size)
{
    unsigned remembered = listed < ACPI_MAX_CPUS ? listed : ACPI_MAX_CPUS;
    unsigned over = listed - started - failed; /* never tried: past MAX_CPUS (or past what was remembered) */
    warn[0] = 0;
    if (started == listed) {
        ksnprintf(info, info_size, "smp: the firmware listed %u cpus; all %u started", listed, started);
        return;
    }
    ksnprintf(info, info_size, "smp: the firmware listed %u cpus; %u started, %u did not start, %u left over "
              "MAX_CPUS (%u)", listed, started, failed, over, (unsigned)MAX_CPUS);
    if (over == 0 || considered >= remembered)
        return;
    /* Which: the APIC ids never tried, as ranges on one line, cut with ",..." where it would not fit. */
    char line[128];
    size_t n = 0;
    for (unsigned i = considered; i < remembered && n + 24 < sizeof line;) {
        unsigned j = i;
        while (j + 1 < remembered && apic_ids[j + 1] == apic_ids[j] + 1)
            j++;
        n += ksnprintf(line + n, sizeof line - n, j > i ? "%s%u-%u" : "%s%u", n ? "," : "", apic_ids[i],
                       apic_ids[j]);
        i = j + 1;
        if (i < remembered && n + 24 >= sizeof line)
            n += ksnprintf(line + n, sizeof line - n, ",...");
    }
    ksnprintf(warn, warn_size, "smp: left in their reset state: APIC ids %s (this kernel starts at most "
              "MAX_CPUS=%u cpus)", line, (unsigned)MAX_CPUS);
}
