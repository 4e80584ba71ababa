/* tests/unit/profiler_counter_fixture.h: the kernel around the profiler, for the tests of its handshake with
 * the performance counter (test_profiler_counter.c, test_profiler_lifecycle.c) on the stateful fake CPU: one
 * function of text, one busy task per CPU, the NMI path as arch/x86_64/interrupts.c runs it, ticks and counter
 * periods on a chosen CPU, the stop's wait (each CPU overflowing and ticking, or not, as the test says), the
 * stop's cross-CPU request (delivered at once, held while the CPU is away, or lost), the PMU models every test
 * loops over, and a teardown that leaves no run behind. Defined once in profiler_counter_fixture.c; used by
 * test_profiler_counter.c, test_profiler_lifecycle.c and test_profiler_weights.c. */
#ifndef TESTS_UNIT_PROFILER_COUNTER_FIXTURE_H
#define TESTS_UNIT_PROFILER_COUNTER_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "fake_kernel.h"
#include "hal/context.h"
#include "hal/pmu.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler.h"
#include "kernel/profiler/report.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

#define TICK_NS 10000000 /* the tick at its default 100 Hz */

/* Text: one function, "fn", so every sample folds into one chain. */
extern unsigned char text[64];
extern struct symtab tab;
/* A busy task per CPU: the fake kernel's fake_task[] (tests/unit/fake_kernel.h). */

/* The interrupted context: busy code in the one function, interrupts on. */
struct context busy_ctx(void);

/* The kernel's NMI path: the counter's claim, then the sample of the interrupted context -- *nmi_ctx when a test
 * sets it, else busy_ctx() (boot() and teardown() set it back to NULL); the NMI costs nmi_cost cycles of
 * fake_cycles. */
extern const struct context *nmi_ctx;
extern uint64_t nmi_cost;
extern unsigned nmis_claimed;
bool nmi_path(void);
/* An NMI arriving in the middle of a tick's sample: the fake kernel's fake_walk_hook. */

/* A tick on cpu (which becomes the current CPU). */
void tick(unsigned cpu);
/* Time passing on cpu: n periods of the counter, each raising (at most) one overflow. */
void run_periods(unsigned cpu, unsigned n);

/* The stop's wait (the fake kernel's task_sleep_ms): each CPU overflows once more when overflow_before_disarm,
 * then ticks -- except the CPUs in away_cpus (bit per CPU: a descheduled vCPU, a CPU parked by the debugger),
 * which do neither. fake_sleeps counts the sleeps. */
extern bool overflow_before_disarm;
extern unsigned away_cpus;
/* The stop's request to a CPU (cpu_send_profiler_stop): taken at once by a CPU that is not away, held for one
 * that is until cpu_comes_back(); held too, while its ticks go on, for a CPU in slow_request_cpus (the
 * request still on its way when the tick lets go). requests_sent counts them, per CPU. */
extern unsigned slow_request_cpus;
extern unsigned requests_sent[];
/* cpu is back (rescheduled, released by the debugger): a request held for it is taken now, first thing. */
void cpu_comes_back(unsigned cpu);

extern struct profile_run run;
uint32_t ring_count(unsigned cpu);
const struct profiler_cpu_run *account(unsigned cpu);
/* The report of r (8 chains), which must print, in report[]; fails the test if needle is not in text_. */
extern char report[8192];
const char *report_of(struct profile_run *r);
void expect_in(const char *text_, const char *needle);

/* The machines: every model of the fake CPU, and what the probe must find on it. */
struct model {
    const char *name;
    void (*setup)(void);
    enum pmu_verdict verdict;
};
#define PROFILER_COUNTER_MODELS 12
extern const struct model models[PROFILER_COUNTER_MODELS];
extern const unsigned model_count; /* PROFILER_COUNTER_MODELS */
#define MODEL_NO_PMU 10 /* models[MODEL_NO_PMU]: no PMU, the tick samples */

/* A fresh machine of model m, booted, every CPU online, nothing away. */
void boot(const struct model *m);
/* Every model (or those whose counter counts) in turn: each booted and named in the test's output; *next (0 to
 * begin) moves past it. NULL after the last. */
const struct model *boot_next_model(unsigned *next);
const struct model *boot_next_counting_model(unsigned *next);
extern bool run_active; /* between start_run and stop_run */
void start_run(void);
void stop_run(void);
/* A run started and its first tick on cpu, which arms cpu's counter (or, on the tick source, samples). */
void start_run_from(unsigned cpu);
/* The machine most tests need: models[0] (Intel v2) booted, a run started, CPU 0's counter armed by its first
 * tick. */
void start_armed_on_intel(void);

/* The group's setup (the text and its symbol table, the tasks, the clock) and each test's teardown. */
int setup_group(void **state);
int teardown(void **state);

#endif
