/* tests/unit/fake_hal.c: host fakes of hal/cpu.h, hal/entropy.h and panic() for the unit tests -- a settable CPU
 * index and clock, interrupt masking, yielding and waiting that only count, a sleep that only moves the clock (for
 * tests that bring no sleep of their own), a scripted hardware generator, and a panic that a test can catch. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hal.h"
#include "hal/context.h"
#include "hal/cpu.h"
#include "hal/entropy.h"
#include "hal/spinlock.h"
#include "kernel/panic.h"
#include "kernel/task.h"

unsigned fake_cpu_index;
unsigned fake_cpu_count = 1;
int64_t fake_time_ns;
uint64_t fake_cycles;
uint64_t fake_cycles_per_ms = 2000000;
unsigned fake_yields, fake_waits_for_interrupt;
unsigned fake_spin_acquires;
bool fake_panic_armed;
jmp_buf fake_panic_jump;
char fake_panic_message[256];

static int irq_depth;

unsigned cpu_index(void) { return fake_cpu_index; }
unsigned cpu_count(void) { return fake_cpu_count; }
uint64_t (*fake_irqs_off_clock)(void);
uint64_t fake_irqs_off_longest;
static uint64_t irqs_off_since;
unsigned long irq_save(void)
{
    if (irq_depth == 0 && fake_irqs_off_clock)
        irqs_off_since = fake_irqs_off_clock();
    return (unsigned long)irq_depth++;
}
void irq_restore(unsigned long flags)
{
    bool turns_on = irq_depth > 0 && flags == 0;
    irq_depth = (int)flags;
    if (turns_on && fake_irqs_off_clock) {
        uint64_t span = fake_irqs_off_clock() - irqs_off_since;
        if (span > fake_irqs_off_longest)
            fake_irqs_off_longest = span;
    }
}
bool irq_enabled(void) { return irq_depth == 0; }
void (*fake_cpu_relax_hook)(void);
void cpu_relax(void)
{
    if (fake_cpu_relax_hook)
        fake_cpu_relax_hook();
}
/* The host has no interrupts to wait for and no scheduler to enter: both only count. */
void cpu_wait_for_interrupt(void) { fake_waits_for_interrupt++; }
void cpu_yield(void) { fake_yields++; }
unsigned long fake_clock_reads;
int64_t fake_time_step_ns;
int64_t time_ns(void)
{
    fake_clock_reads++;
    int64_t now = fake_time_ns;
    fake_time_ns += fake_time_step_ns;
    return now;
}
uint64_t cycles(void)
{
    fake_clock_reads++;
    return fake_cycles;
}
uint64_t cycles_per_ms(void) { return fake_cycles_per_ms; }

unsigned fake_tick_hz = TICK_HZ_DEFAULT;
bool fake_in_interrupt;
uint64_t fake_idle_waits[64];
void tick_set_hz(unsigned hz) { fake_tick_hz = hz; }
unsigned tick_hz(void) { return fake_tick_hz; }
bool context_in_interrupt(const struct context *ctx)
{
    (void)ctx;
    return fake_in_interrupt;
}
const char *fake_irq_enable_site;
/* Weak: test_irq_enable_site links the real one. */
__attribute__((weak)) const char *irq_enable_before(uintptr_t pc)
{
    (void)pc;
    return fake_irq_enable_site;
}
/* Weak: the profiler's lifecycle tests deliver the stop's request themselves
 * (tests/unit/profiler_counter_fixture.c); elsewhere it is only counted. */
unsigned fake_profiler_stop_requests;
__attribute__((weak)) void cpu_send_profiler_stop(unsigned cpu)
{
    (void)cpu;
    fake_profiler_stop_requests++;
}
/* Weak, these two: a program that links the real scheduler (kernel/task.c: the wall sweep's benchmark) has its
 * own. */
void (*fake_idle_waits_hook)(void);
__attribute__((weak)) uint64_t sched_idle_waits(void)
{
    if (fake_idle_waits_hook)
        fake_idle_waits_hook();
    return fake_idle_waits[fake_cpu_index % 64];
}
uint64_t fake_idle_ns[64];
__attribute__((weak)) uint64_t sched_cpu_idle_ns(unsigned cpu) { return fake_idle_ns[cpu % 64]; }
/* Weak: kernel/profiler/run.c's window sleeps, and a test that runs a window brings its own ticks with the
 * sleep; the others link run.c for its drain and never sleep, so the clock only jumps. */
__attribute__((weak)) void task_sleep_until(int64_t when_ns)
{
    if (when_ns > fake_time_ns)
        fake_time_ns = when_ns;
}

/* Weak: hal/spinlock.h's slow path is the kernel's (kernel/profiler/lock_sites.c, which also counts the wait);
 * a program that does not link it only waits, as a spinlock did before it counted anything. */
__attribute__((weak)) void spin_lock_contended(spinlock_t *lock)
{
    do {
        while (atomic_load_explicit(&lock->locked, memory_order_relaxed))
            cpu_relax();
    } while (atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire));
}

bool fake_entropy_present;
const uint64_t *fake_entropy_script;
unsigned fake_entropy_script_len;
unsigned fake_entropy_reads;
static uint64_t entropy_walk = 42;

/* An LCG's high bits: distinct generator values, wandering timings. */
static uint64_t entropy_next(void)
{
    entropy_walk = entropy_walk * 6364136223846793005ull + 1442695040888963407ull;
    return entropy_walk >> 11;
}

bool entropy_hardware_present(void) { return fake_entropy_present; }

bool entropy_hardware_read(uint64_t *out)
{
    unsigned at = fake_entropy_reads++;
    if (!fake_entropy_present)
        return false;
    if (!fake_entropy_script_len)
        *out = entropy_next();
    else
        *out = fake_entropy_script[at < fake_entropy_script_len ? at : fake_entropy_script_len - 1];
    return true;
}

size_t entropy_timing_read(enum entropy_timing which, uint64_t *out, size_t cap)
{
    if (which == ENTROPY_WALLCLOCK) {
        if (cap)
            out[0] = 0x20261203073000ull;
        return cap ? 1 : 0;
    }
    for (size_t i = 0; i < cap; i++)
        out[i] = 100000 + (entropy_next() & 0xfff);
    return cap;
}

void entropy_tick(void) {}

void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fake_panic_message, sizeof fake_panic_message, fmt, ap);
    va_end(ap);
    if (fake_panic_armed)
        longjmp(fake_panic_jump, 1);
    fprintf(stderr, "panic: %s\n", fake_panic_message);
    abort();
}
