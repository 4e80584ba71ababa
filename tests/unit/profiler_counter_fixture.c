/* tests/unit/profiler_counter_fixture.c: the machine the profiler's counter tests run on
 * (tests/unit/profiler_counter_fixture.h) -- the kernel's services the profiler calls (text, tasks, stacks,
 * the heap, the stop's sleep and its cross-CPU request) over the fake kernel, the NMI path, and the models. Shared by
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

/* Tasks, their stacks, the walk (pc alone: the stacks hold no caller) and the stop's sleep are the fake
 * kernel's (tests/unit/fake_kernel.c); the image is this file's, the sleep's ticks (stop_tick) too. */
unsigned char text[64];
struct symtab tab;

void *kmalloc(size_t size) { return malloc(size); }
void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *p) { free(p); }

struct context busy_ctx(void)
{
    return fake_interrupt((uintptr_t)&text[16], 2);
}

const struct context *nmi_ctx;
uint64_t nmi_cost;
unsigned nmis_claimed;
bool nmi_path(void)
{
    struct context ctx = nmi_ctx ? *nmi_ctx : busy_ctx();
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
unsigned away_cpus;
/* Each CPU's tick in the stop's wait (fake_tick_hook): none on a CPU away; a last overflow first when asked. */
static void stop_tick(unsigned cpu)
{
    if (away_cpus & (1u << cpu))
        return;
    if (overflow_before_disarm && pmu_usable())
        run_periods(cpu, 1);
    tick(cpu);
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
    fake_boot(m->setup, nmi_path);
    nmi_ctx = NULL;
    nmi_cost = 0;
    nmis_claimed = 0;
    overflow_before_disarm = false;
    fake_sleeps = 0;
    fake_tick_hook = stop_tick;
    away_cpus = 0;
    slow_request_cpus = 0;
    memset(requests_sent, 0, sizeof requests_sent);
    memset(request_held, 0, sizeof request_held);
}

static const struct model *boot_next(unsigned *next, bool counting_only)
{
    for (; *next < model_count; (*next)++) {
        const struct model *m = &models[*next];
        if (counting_only && m->verdict != PMU_COUNTS)
            continue;
        (*next)++;
        print_message("model: %s\n", m->name);
        boot(m);
        return m;
    }
    return NULL;
}

const struct model *boot_next_model(unsigned *next) { return boot_next(next, false); }
const struct model *boot_next_counting_model(unsigned *next) { return boot_next(next, true); }

bool run_active;
void start_run(void)
{
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    run_active = true;
}

void start_run_from(unsigned cpu)
{
    start_run();
    tick(cpu);
}

void start_armed_on_intel(void)
{
    boot(&models[0]);
    start_run_from(0);
}

void stop_run(void)
{
    profiler_stop(&run);
    run_active = false;
}

int teardown(void **state)
{
    (void)state;
    nmi_ctx = NULL;
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
    fake_image(&tab, syms, 1, "fn", text, sizeof text);
    fake_tasks_reset(20); /* busy tasks, pids 20 and up */
    fake_time_ns = 1000000000;
    return 0;
}
