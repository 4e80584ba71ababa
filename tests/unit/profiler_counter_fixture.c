/* tests/unit/profiler_counter_fixture.c: the machine the profiler's counter tests run on
 * (tests/unit/profiler_counter_fixture.h) -- the kernel's services the profiler calls (text, tasks, stacks,
 * the heap, the stop's sleep and its cross-CPU request), the NMI path, and the models. Shared by
 * test_profiler_counter.c (the handshake), test_profiler_lifecycle.c (the stop) and test_profiler_weights.c
 * (what each sample weighs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profiler_counter_fixture.h"

#include "arch/x86_64/pmu_backend.h"
#include "fake_cpu.h"
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "kernel/heap.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler/report.h"
#include "kernel/stacktrace.h"
#include "kernel/task.h"

/* ---- the kernel around the profiler ------------------------------------------------------------------ */

unsigned char text[64];
struct symtab tab;
const struct symtab *kernel_symtab(void) { return &tab; }

struct task tasks[FAKE_CPUS];
struct task *task_current(void) { return &tasks[fake_cpu_index % FAKE_CPUS]; }
struct stack_bounds task_stack_bounds(const struct task *task)
{
    (void)task;
    struct stack_bounds none = { 0, 0 };
    return none;
}
void (*sample_walk_hook)(void);
int stack_trace_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp, const struct stack_bounds *stack,
                     const struct text_bounds *text_bounds, uintptr_t *out, int max)
{
    (void)sp, (void)rbp, (void)stack, (void)text_bounds, (void)max;
    if (sample_walk_hook)
        sample_walk_hook();
    out[0] = pc;
    return 1;
}
void *kmalloc(size_t size) { return malloc(size); }
void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *p) { free(p); }

struct context busy_ctx(void)
{
    struct context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.rip = (uintptr_t)&text[16];
    ctx.rflags = 0x202;
    ctx.vector = 2;
    return ctx;
}

uint64_t nmi_cost;
unsigned nmis_claimed;
bool nmi_path(void)
{
    struct context ctx = busy_ctx();
    fake_cycles += nmi_cost;
    bool mine = profiler_nmi(&ctx, fake_cycles - nmi_cost);
    nmis_claimed += mine;
    return mine;
}

/* ---- driving the machine ----------------------------------------------------------------------------- */

void tick(unsigned cpu)
{
    struct context ctx = busy_ctx();
    ctx.vector = 0xE0;
    fake_cpu_index = cpu;
    profiler_tick(&ctx);
}

void run_periods(unsigned cpu, unsigned n)
{
    fake_cpu_index = cpu;
    uint64_t period = pmu_period_cycles() ? pmu_period_cycles() : fake_cycles_per_ms;
    for (unsigned i = 0; i < n; i++) {
        fake_advance(period);
        fake_cycles += period;
    }
}

bool overflow_before_disarm;
unsigned stop_waits;
unsigned away_cpus;
void task_sleep_ms(uint32_t ms)
{
    stop_waits++;
    unsigned caller = fake_cpu_index;
    for (unsigned cpu = 0; cpu < fake_cpu_count; cpu++) {
        if (away_cpus & (1u << cpu))
            continue;
        if (overflow_before_disarm && pmu_usable())
            run_periods(cpu, 1);
        tick(cpu);
    }
    fake_cpu_index = caller;
    fake_time_ns += (int64_t)ms * 1000000;
}

unsigned slow_request_cpus;
unsigned requests_sent[FAKE_CPUS];
static bool request_held[FAKE_CPUS];

static void take_request(unsigned cpu)
{
    unsigned caller = fake_cpu_index;
    fake_cpu_index = cpu;
    profiler_stop_request();
    fake_cpu_index = caller;
}

void cpu_send_profiler_stop(unsigned cpu)
{
    assert_true(cpu < FAKE_CPUS);
    requests_sent[cpu]++;
    if ((away_cpus | slow_request_cpus) & (1u << cpu))
        request_held[cpu] = true;
    else
        take_request(cpu);
}

void cpu_comes_back(unsigned cpu)
{
    away_cpus &= ~(1u << cpu);
    slow_request_cpus &= ~(1u << cpu);
    if (request_held[cpu]) {
        request_held[cpu] = false;
        take_request(cpu);
    }
}

struct profile_run run;

uint32_t ring_count(unsigned cpu) { return profile_ring_count(&run.rings[cpu]); }

const struct profiler_cpu_run *account(unsigned cpu) { return &run.cpu[cpu]; }

char report[8192];
const char *report_of(struct profile_run *r)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, report, sizeof report);
    assert_int_equal(profile_report(r, NULL, 8, &tab, &bs.sink), 0);
    return report;
}

void expect_in(const char *text_, const char *needle)
{
    if (!strstr(text_, needle))
        fail_msg("expected \"%s\" in:\n%s", needle, text_);
}

/* ---- the models -------------------------------------------------------------------------------------- */

const struct model models[PROFILER_COUNTER_MODELS] = {
    { "intel v2", fake_model_intel_v2, PMU_COUNTS },
    { "intel v4 with freeze set by firmware", fake_model_intel_v4_freeze, PMU_COUNTS },
    { "intel v5 without fixed counter 1", fake_model_intel_v5_no_fixed1, PMU_NOT_CLAIMED },
    { "intel hybrid", fake_model_intel_hybrid, PMU_COUNTS },
    { "amd zen 2 (sign bit)", fake_model_amd_zen2, PMU_COUNTS },
    { "amd zen 4 (perfmon v2)", fake_model_amd_zen4, PMU_COUNTS },
    { "amd legacy only", fake_model_amd_legacy_only, PMU_NOT_CLAIMED },
    { "hypervisor that swallows writes", fake_model_hypervisor_swallows, PMU_DOES_NOT_COUNT },
    { "qemu -cpu max", fake_model_qemu_amd_max, PMU_NOT_CLAIMED },
    { "counter without interrupt", fake_model_no_interrupt, PMU_NO_INTERRUPT },
    { "no pmu", fake_model_no_pmu, PMU_NOT_CLAIMED },
    { "kvm whose PMIs leave the LVT entry unmasked", fake_model_kvm_unmasked_pmi, PMU_COUNTS },
};
const unsigned model_count = sizeof models / sizeof models[0];

void boot(const struct model *m)
{
    fake_reset();
    m->setup();
    pmu_reset_for_tests();
    pmu_select(NULL);
    fake.nmi_handler = nmi_path;
    fake_cpu_count = FAKE_CPUS;
    fake_cpu_index = 0;
    fake_tick_hz = TICK_HZ_DEFAULT;
    memset(fake_idle_waits, 0, sizeof fake_idle_waits);
    nmi_cost = 0;
    nmis_claimed = 0;
    overflow_before_disarm = false;
    stop_waits = 0;
    away_cpus = 0;
    slow_request_cpus = 0;
    memset(requests_sent, 0, sizeof requests_sent);
    memset(request_held, 0, sizeof request_held);
}

bool run_active;
void start_run(void)
{
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    run_active = true;
}

void stop_run(void)
{
    profiler_stop(&run);
    run_active = false;
}

int teardown(void **state)
{
    (void)state;
    if (run_active)
        stop_run();
    profiler_release();
    return 0;
}

int setup_group(void **state)
{
    (void)state;
    static struct ksym syms[1];
    syms[0] = (struct ksym){ (uint64_t)(uintptr_t)text, sizeof text, 0 };
    memset(text, 0x90, sizeof text);
    tab.syms = syms;
    tab.count = 1;
    tab.names = "fn";
    tab.text_start = (uintptr_t)text;
    tab.text_end = (uintptr_t)text + sizeof text;
    for (unsigned i = 0; i < FAKE_CPUS; i++) {
        tasks[i].pid = 20 + i;
        tasks[i].is_idle = false;
    }
    fake_time_ns = 1000000000;
    return 0;
}
