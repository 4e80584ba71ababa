/* tests/unit/profiler_counter_fixture.h: the machine of the counter's tests (tests/unit/profiler_counter_fixture.c):
 * the real profiler, fold and PMU driver on the stateful fake CPU (tests/unit/fake_cpu.h), one model at a time,
 * driven tick by tick and counter period by counter period. */
#ifndef TESTS_UNIT_PROFILER_COUNTER_FIXTURE_H
#define TESTS_UNIT_PROFILER_COUNTER_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "hal/pmu.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler.h"
#include "kernel/profiler/report.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

#define TICK_NS 10000000 /* the tick at its default 100 Hz */

/* Text: one function ("fn"), so every sample folds into one chain; a task per CPU. */
extern unsigned char text[64];
extern struct symtab tab;
extern struct task tasks[FAKE_CPUS];

/* The interrupted context: busy code in the one function, interrupts on. */
struct context busy_ctx(void);
/* The kernel's NMI path: the counter's claim, then the sample; each NMI costs nmi_cost cycles. */
extern uint64_t nmi_cost;
extern unsigned nmis_claimed;
bool nmi_path(void);
/* One tick on cpu. */
void tick(unsigned cpu);
/* Time passing on one CPU: n periods of the counter (its nominal one), each raising at most one overflow. */
void run_periods(unsigned cpu, unsigned n);
/* The stop's wait: each CPU overflows once more before its disarm tick when overflow_before_disarm. */
extern bool overflow_before_disarm;
extern unsigned stop_waits;

extern struct profile_run run;
uint32_t ring_count(unsigned cpu);
const struct profiler_cpu_run *account(unsigned cpu);
/* The report of r (8 chains) in a static buffer. */
extern char report[8192];
const char *report_of(struct profile_run *r);
void expect_in(const char *text_, const char *needle);

struct model {
    const char *name;
    void (*setup)(void);
    enum pmu_verdict verdict; /* what the probe must find */
};
#define PROFILER_COUNTER_MODELS 11
extern const struct model models[PROFILER_COUNTER_MODELS];

/* A fresh fake CPU of model m, with the PMU driver selected on it and nothing running. */
void boot(const struct model *m);
extern bool run_active;
void start_run(void);
void stop_run(void);
/* cmocka: a failed test leaves no run behind; the group's text, symbols and tasks. */
int profiler_counter_teardown(void **state);
int profiler_counter_setup_group(void **state);

#endif
