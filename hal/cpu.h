/* hal/cpu.h: what portable kernel code may ask of the processor it runs on -- which CPU this is, how many
 * there are, interrupt masking, waiting for an interrupt, giving up the CPU, the tick rate and the one clock.
 * arch/x86_64 implements it; tests/unit/fake_hal.c fakes it for host tests. */
#ifndef HAL_CPU_H
#define HAL_CPU_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_CPUS 256 /* CPUs started; the firmware may list more, and the boot log says which were left */

/* Index of the calling CPU, 0 .. cpu_count()-1 (0 is the boot CPU). Stable while interrupts are off. */
unsigned cpu_index(void);
/* CPUs that have come online. */
unsigned cpu_count(void);

/* Interrupt flag: irq_save() disables and returns the previous state for irq_restore(). */
unsigned long irq_save(void);
void irq_restore(unsigned long flags);
bool irq_enabled(void);

/* A spin-wait hint (PAUSE). */
void cpu_relax(void);
/* Enables interrupts and halts until one arrives, atomically: an interrupt that becomes pending between the
 * two is taken, never slept through (x86's STI; HLT). For idle loops; interrupts are left enabled.
 *     void cpu_wait_for_interrupt(void);
 * Gives up the CPU: enters the scheduler (sched_switch, hal/kernel_entry.h) from task context, and returns
 * when the scheduler picks the calling task again. Interrupts must be enabled.
 *     void cpu_yield(void);
 * The architecture defines both inline (arch/x86_64/cpu_inline.h), so the instruction stays in the caller's
 * frame; the host tests' fakes (tests/unit/fake_hal.c) are plain functions. */
#ifdef KPROF_HOST
void cpu_wait_for_interrupt(void);
void cpu_yield(void);
#else
#include "arch/x86_64/cpu_inline.h"
#endif

/* The profiler's stop, asking cpu to let go of the stopping run now rather than on its next tick: an
 * interrupt to that CPU alone (x86: a fixed-vector IPI) whose handler calls profiler_stop_request()
 * (hal/kernel_entry.h) on it -- the counter is still disarmed by the CPU that owns it. Returns at once; the CPU
 * takes it as soon as it takes interrupts (at once when running with them on; after its interrupts-off stretch;
 * when a descheduled vCPU runs again; when the debugger releases a parked CPU). Task context. */
void cpu_send_profiler_stop(unsigned cpu);

/* The tick: every CPU's periodic timer interrupt, which schedules and (without a counter) samples. Its rate
 * is set once at boot, before any CPU starts its tick (profile.hz= on the kernel command line). */
#define TICK_HZ_DEFAULT 100
#define TICK_HZ_MIN 10
#define TICK_HZ_MAX 4000
void tick_set_hz(unsigned hz);
unsigned tick_hz(void);

/* Nanoseconds since boot from the calibrated TSC: signed, monotonic, one clock for the whole kernel.
 * Compare times as signed differences, never unsigned subtraction. The tick is periodic at tick_hz() on
 * this clock's scale (both are calibrated against the same PIT window), so a tick's lateness is measured on
 * it (kernel/profiler.c), not read from the timer. */
int64_t time_ns(void);
/* Raw cycle counter, and its calibrated rate in kHz. */
uint64_t cycles(void);
uint64_t cycles_per_ms(void);

#endif
