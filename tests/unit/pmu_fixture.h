/* tests/unit/pmu_fixture.h: what the PMU tests share on the fake CPU of tests/unit/fake_cpu.c -- the per-test
 * setup and the teardown that holds every test to the machine's invariants (the legacy AMD counters at
 * 0xC0010000..7 never touched, the fake's log not overflowed, a PMI only in NMI mode, no bad LVT write), booting
 * a machine model with a pmu= value, checks of the fake's MSR/LVT/NMI log, lscpu's text, and running armed
 * periods. Defined once in pmu_fixture.c for every test_pmu_*.c. */
#ifndef TESTS_UNIT_PMU_FIXTURE_H
#define TESTS_UNIT_PMU_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#define MS 2000000ull /* fake cycles per millisecond (fake_cycles_per_ms) */
#define BIT(n) (1ull << (n))
#define MASK(bits) ((bits) >= 64 ? ~0ull : BIT(bits) - 1)

/* Intel fixed counter 1's field in IA32_FIXED_CTR_CTRL, and AMD PERF_CTL0's fields. */
#define FIXED1_COUNT 0x30ull  /* OS | USR */
#define FIXED1_PMI 0x80ull
#define AMD_COUNT (0x76ull | BIT(16) | BIT(17) | BIT(22))
#define AMD_INT BIT(20)

int setup(void **state);
int teardown(void **state);

/* A fresh machine, and the boot-time selection with the given pmu= value (NULL: none given). */
void boot(void (*model)(void), const char *mode);
/* A fresh machine (no pmu= value) whose counter the probe finds counting, armed on CPU 0. */
void boot_armed(void (*model)(void));

/* The fake's log entry i is this wrmsr, this LVT PC write, this NMI (the counter's or a genuine one). */
void expect_write(unsigned i, uint32_t msr, uint64_t value);
void expect_lvt(unsigned i, uint32_t value);
void expect_nmi(unsigned i, bool mine);

/* describe_now() captures what pmu_describe writes (lscpu's PMU lines) in described; expect_described finds a
 * line in it. */
extern char described[2048];
void describe_now(void);
void expect_described(const char *line);

/* Runs this CPU armed for n periods and checks n NMIs arrived, each claimed, none lost. */
void run_periods(unsigned n);

#endif
