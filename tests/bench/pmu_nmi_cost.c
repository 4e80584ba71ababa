/* tests/bench/pmu_nmi_cost.c: the driver that tests/bench/pmu_nmi_cost.sh runs under callgrind to count the
 * instructions of the PMU's NMI path -- pmu_nmi_is_mine() deciding that an overflow is the counter's,
 * acknowledging it, reloading the counter and unmasking the LVT entry -- built for the host from
 * arch/x86_64/pmu*.c against the fake CPU of tests/unit/fake_cpu.c:
 *   intel -- the Intel v2 model (fixed counter 1, overflow read from the global status);
 *   amd   -- the AMD Zen 2 model (core counter 0, overflow read from the sign bit);
 *   probe -- the probe, N times, on the model whose counter counts but never interrupts: prints "probe LONGEST
 *            PER_MS", the longest stretch it held interrupts off in TSC cycles and the TSC's cycles a ms
 *            (tests/unit/fake_hal.h keeps the stretch);
 *   port61 -- the boot CPU's port 0x61 reads: N ms of a counter run on the Intel v2 model (one overflow a ms),
 *            every NMI decided by nmi_owner() and the tick's owed check run at each tick, as interrupts.c runs
 *            them, at 100 and at 1000 ticks a second, then N ms with the counter off: prints "port61 HZ READS
 *            TICKS NMIS" per rate and "port61 off READS TICKS".
 * For intel and amd it selects, probes and arms the counter as the kernel does, then lets fake time run one
 * period at a time, so every NMI is a real overflow the fake delivers. Prints the number of calls of
 * pmu_nmi_is_mine() and the hardware accesses each NMI made, and checks the work was real (every NMI claimed,
 * none genuine, none lost). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/nmi_owner.h"
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

/* ---- port 0x61 on the boot CPU -------------------------------------------------------------------------- */

static atomic_bool port61_owed;
static struct nmi_history boot_history;
static unsigned port61_reads, nmis_claimed;

static uint8_t count_port61(void)
{
    port61_reads++;
    return 0; /* no error: the figure is how often it is read */
}
static bool not_panicking(void) { return false; }
static bool counter_claims(void *arg) { (void)arg; return pmu_nmi_is_mine(); }
static bool nobody_claims(void *arg) { (void)arg; return false; }

/* The boot CPU's NMI, decided as interrupts.c's nmi() decides it (the selftest and the debugger quiet). */
static bool boot_cpu_nmi(void)
{
    const struct nmi_sources src = {
        .panicking = not_panicking, .counter = counter_claims, .selftest = nobody_claims,
        .debugger = nobody_claims, .port61 = count_port61, .boot_cpu = true, .port61_owed = &port61_owed,
        .at = fake_nmi_at(), .now = fake.tsc, .late_window = fake_cycles_per_ms / 20, .history = &boot_history,
    };
    uint8_t port;
    enum nmi_owner owner = nmi_owner(&src, &port);
    nmi_returning(&boot_history, fake_nmi_at(), fake.tsc);
    bool claimed = owner == NMI_KPROF || owner == NMI_KPROF_CHECK_LATER;
    nmis_claimed += claimed;
    return claimed;
}

/* ms milliseconds of fake time on the boot CPU, its tick's owed check every 1000/hz of them: (reads, ticks). */
static void run_ticks(unsigned ms, unsigned hz, unsigned *reads, unsigned *ticks)
{
    unsigned r = port61_reads;
    *ticks = 0;
    for (unsigned i = 1; i <= ms; i++) {
        fake_advance(fake_cycles_per_ms);
        if (i % (1000 / hz) == 0) {
            uint8_t port;
            if (nmi_port61_owed_check(&port61_owed, count_port61, &port)) {
                fprintf(stderr, "pmu_nmi_cost: port 0x61 reported an error\n");
                exit(1);
            }
            ++*ticks;
        }
    }
    *reads = port61_reads - r;
}

static int port61_per_tick(unsigned ms)
{
    fake_model_intel_v2();
    fake.log_off = true;
    fake.nmi_handler = boot_cpu_nmi;
    pmu_reset_for_tests();
    pmu_select(NULL);
    if (pmu_probe() != PMU_COUNTS || !pmu_arm_this_cpu()) {
        fprintf(stderr, "pmu_nmi_cost: the intel model did not arm: %s\n", pmu_verdict_reason());
        return 1;
    }
    static const unsigned rates[] = { 100, 1000 };
    unsigned reads, ticks;
    for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        unsigned before = nmis_claimed;
        run_ticks(ms, rates[i], &reads, &ticks);
        if (nmis_claimed - before != ms || fake.pmis_lost) {
            fprintf(stderr, "pmu_nmi_cost: %u NMIs claimed in %u ms, %u PMIs lost\n", nmis_claimed - before, ms,
                    fake.pmis_lost);
            return 1;
        }
        printf("port61 %u %u %u %u\n", rates[i], reads, ticks, nmis_claimed - before);
    }
    pmu_disarm_this_cpu();
    run_ticks(ms, 1000, &reads, &ticks); /* the owed mark of the last NMI is read at the first of these */
    run_ticks(ms, 1000, &reads, &ticks);
    printf("port61 off %u %u\n", reads, ticks);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[1], "intel") && strcmp(argv[1], "amd") && strcmp(argv[1], "probe") && strcmp(argv[1], "port61")) ||
        atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s intel|amd|probe|port61 N\n", argv[0]);
        return 2;
    }
    unsigned n = (unsigned)atoi(argv[2]);
    if (strcmp(argv[1], "probe") == 0)
        return probe_irqs_off(n);
    if (strcmp(argv[1], "port61") == 0)
        return port61_per_tick(n);
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
