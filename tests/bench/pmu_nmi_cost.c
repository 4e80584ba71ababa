/* tests/bench/pmu_nmi_cost.c: the driver that tests/bench/pmu_nmi_cost.sh runs under callgrind to count the
 * instructions of the PMU's NMI path -- pmu_nmi_is_mine() deciding that an overflow is the counter's,
 * acknowledging it, reloading the counter and unmasking the LVT entry -- built for the host from
 * arch/x86_64/pmu*.c against the fake CPU of tests/unit/fake_cpu.c:
 *   intel -- the Intel v2 model (fixed counter 1, overflow read from the global status);
 *   amd   -- the AMD Zen 2 model (core counter 0, overflow read from the sign bit);
 *   probe -- the probe, N times, on the model whose counter counts but never interrupts: prints "probe LONGEST
 *            PER_MS", the longest stretch it held interrupts off in TSC cycles and the TSC's cycles a ms
 *            (tests/unit/fake_hal.h keeps the stretch).
 * For intel and amd it selects, probes and arms the counter as the kernel does, then lets fake time run one
 * period at a time, so every NMI is a real overflow the fake delivers. Prints the number of calls of
 * pmu_nmi_is_mine() and the hardware accesses each NMI made, and checks the work was real (every NMI claimed,
 * none genuine, none lost). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pmu_backend.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "hal/pmu.h"

static uint64_t fake_tsc(void) { return fake.tsc; }

/* The probe's longest interrupts-off stretch over n probes of the model that counts but never interrupts. */
static int probe_irqs_off(unsigned n)
{
    uint64_t longest = 0;
    for (unsigned i = 0; i < n; i++) {
        fake_model_no_interrupt();
        fake.log_off = true;
        pmu_reset_for_tests();
        pmu_select(NULL);
        fake_irqs_off_clock = fake_tsc;
        fake_irqs_off_longest = 0;
        enum pmu_verdict v = pmu_probe();
        fake_irqs_off_clock = NULL;
        if (v != PMU_NO_INTERRUPT || !fake_irqs_off_longest) {
            fprintf(stderr, "pmu_nmi_cost: the probe said %s\n", pmu_verdict_reason());
            return 1;
        }
        if (fake_irqs_off_longest > longest)
            longest = fake_irqs_off_longest;
    }
    printf("probe %llu %llu\n", (unsigned long long)longest, (unsigned long long)fake_cycles_per_ms);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "intel") && strcmp(argv[1], "amd") && strcmp(argv[1], "probe")) ||
        atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s intel|amd|probe N\n", argv[0]);
        return 2;
    }
    unsigned n = (unsigned)atoi(argv[2]);
    if (strcmp(argv[1], "probe") == 0)
        return probe_irqs_off(n);
    if (strcmp(argv[1], "intel") == 0)
        fake_model_intel_v2();
    else
        fake_model_amd_zen2();
    fake.log_off = true; /* the log is for the unit tests; here it would only add the fake's own work */
    pmu_reset_for_tests();
    pmu_select(NULL);
    if (pmu_probe() != PMU_COUNTS || !pmu_arm_this_cpu()) {
        fprintf(stderr, "pmu_nmi_cost: the %s model did not arm: %s\n", argv[1], pmu_verdict_reason());
        return 1;
    }

    unsigned mine = fake.nmis_mine, genuine = fake.nmis_genuine;
    unsigned accesses = fake.msr_accesses, writes = fake.msr_writes, lvt = fake.lvt_writes, lvt_reads = fake.lvt_reads;
    for (unsigned i = 0; i < n; i++)
        fake_advance(fake_cycles_per_ms); /* one period: one overflow, one NMI */
    if (fake.nmis_mine - mine != n || fake.nmis_genuine != genuine || fake.pmis_lost) {
        fprintf(stderr, "pmu_nmi_cost: %u NMIs claimed, %u genuine, %u lost; wanted %u claimed\n",
                fake.nmis_mine - mine, fake.nmis_genuine - genuine, fake.pmis_lost, n);
        return 1;
    }
    unsigned reads = (fake.msr_accesses - accesses) - (fake.msr_writes - writes);
    /* Every call of pmu_nmi_is_mine() is collected, the probe's NMI included. */
    printf("calls %u\n", fake.nmis_mine + fake.nmis_genuine);
    printf("hw %u %u %u %u\n", reads / n, (fake.msr_writes - writes) / n, (fake.lvt_writes - lvt) / n,
           (fake.lvt_reads - lvt_reads) / n);
    pmu_disarm_this_cpu();
    return 0;
}
