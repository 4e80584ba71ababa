/* tests/unit/fake_hal.h: controls for the host fakes of hal/ and panic() that every unit test links
 * (tests/unit/fake_hal.c). */
#ifndef TESTS_UNIT_FAKE_HAL_H
#define TESTS_UNIT_FAKE_HAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

/* The CPU the code under test believes it runs on, and how many there are. */
extern unsigned fake_cpu_index;
extern unsigned fake_cpu_count;
/* The clock: time_ns() returns fake_time_ns; cycles() returns fake_cycles; cycles_per_ms() fake_cycles_per_ms.
 * Every time_ns() and cycles() call counts in fake_clock_reads (each is an RDTSC on the machine), so a test
 * or a benchmark can say how often a path reads the clock. */
extern int64_t fake_time_ns;
extern uint64_t fake_cycles;
extern uint64_t fake_cycles_per_ms;
extern unsigned long fake_clock_reads;
/* When not 0, each time_ns() moves the clock on by this much after reading it: a loop that spins until a time
 * (work's compute phase) ends on the host too. */
extern int64_t fake_time_step_ns;
/* cpu_send_profiler_stop() calls, where the test does not deliver them itself. */
extern unsigned fake_profiler_stop_requests;
/* Interrupt masking nests as irq_save/irq_restore say. With fake_irqs_off_clock set, the longest span from the
 * outermost irq_save() to the irq_restore() that turns interrupts back on, in that clock's units, is kept in
 * fake_irqs_off_longest (a test zeroes it). */
extern uint64_t (*fake_irqs_off_clock)(void);
extern uint64_t fake_irqs_off_longest;
/* Called at each cpu_relax() when set (a spinlock's wait, for one): a test releases a lock from it, so one thread
 * can watch a contended acquisition end. */
extern void (*fake_cpu_relax_hook)(void);
/* Calls of cpu_yield() and cpu_wait_for_interrupt(), which do nothing else on the host. */
extern unsigned fake_yields, fake_waits_for_interrupt;

/* The tick: tick_hz() returns fake_tick_hz (tick_set_hz sets it). context_in_interrupt() says
 * fake_in_interrupt; sched_idle_waits() fake_idle_waits[the current CPU]; sched_cpu_idle_ns(cpu)
 * fake_idle_ns[cpu]. */
extern unsigned fake_tick_hz;
extern bool fake_in_interrupt;
extern uint64_t fake_idle_waits[64];
/* Called at each sched_idle_waits() when set: the first thing a run's first tick asks on a CPU, after it read
 * the active word and before it began the run (a stop racing that tick). */
extern void (*fake_idle_waits_hook)(void);
extern uint64_t fake_idle_ns[64];
/* irq_enable_before() answers this for every pc (arch/x86_64/irq_enable_site.c has its own test). */
extern const char *fake_irq_enable_site;

/* hal/entropy.h: entropy_hardware_present() says fake_entropy_present; each entropy_hardware_read() (counted
 * in fake_entropy_reads) succeeds, carry set, with the next of fake_entropy_script's fake_entropy_script_len values
 * and then the last of them again (a stuck generator is one value), or without a script with distinct ones. The
 * timings give readings that wander, the wall clock one fixed reading; entropy_tick() does nothing. */
extern bool fake_entropy_present;
extern const uint64_t *fake_entropy_script;
extern unsigned fake_entropy_script_len;
extern unsigned fake_entropy_reads;

/* panic(): with fake_panic_armed set, records the message in fake_panic_message and longjmps to
 * fake_panic_jump; otherwise prints it and aborts the test binary. Use EXPECT_PANIC. */
extern bool fake_panic_armed;
extern jmp_buf fake_panic_jump;
extern char fake_panic_message[256];

#define EXPECT_PANIC(statement)                                         \
    do {                                                                \
        fake_panic_armed = true;                                        \
        fake_panic_message[0] = 0;                                      \
        if (setjmp(fake_panic_jump) == 0) {                             \
            statement;                                                  \
            fake_panic_armed = false;                                   \
            fail_msg("expected a panic from: %s", #statement);          \
        }                                                               \
        fake_panic_armed = false;                                       \
    } while (0)

/* With FAKE_COUNT_SPINLOCKS defined and this header force-included (-include fake_hal.h) ahead of everything,
 * hal/spinlock.h is replaced by these stand-ins, which count every acquire in fake_spin_acquires: a test can
 * then say no lock was taken on a path. */
extern unsigned fake_spin_acquires;
#ifdef FAKE_COUNT_SPINLOCKS
#define HAL_SPINLOCK_H
#include <stdatomic.h>
#include "hal/cpu.h"
typedef struct {
    atomic_int locked;
    int owner_cpu;
} spinlock_t;
#define SPINLOCK_INIT { 0, -1 }
static inline unsigned long spin_lock_irqsave(spinlock_t *lock)
{
    unsigned long flags = irq_save();
    fake_spin_acquires++;
    atomic_store(&lock->locked, 1);
    lock->owner_cpu = (int)cpu_index();
    return flags;
}
static inline bool spin_trylock_irqsave(spinlock_t *lock, unsigned long *flags)
{
    *flags = irq_save();
    fake_spin_acquires++;
    if (atomic_exchange(&lock->locked, 1)) {
        irq_restore(*flags);
        return false;
    }
    lock->owner_cpu = (int)cpu_index();
    return true;
}
static inline void spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
    lock->owner_cpu = -1;
    atomic_store(&lock->locked, 0);
    irq_restore(flags);
}
#endif

#endif
