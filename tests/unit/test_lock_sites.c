/* tests/unit/test_lock_sites.c: the spinlock's slow path (hal/spinlock.h's spin_lock_contended, in
 * kernel/profiler/lock_sites.c) and what it counts in the lock table -- an acquisition whose exchange found the lock
 * held spins until it is let go (here by the fake's cpu_relax hook, which also moves the clock: 250 ns a relax), then
 * holds it with interrupts masked and has counted one contention under the waiter's chain (the call site that took
 * the lock, then its caller, walked inside the task's own stack) with the time it spun; the same site again is the
 * same entry; an uncontended acquisition and a refused spin_trylock_irqsave count nothing; a CPU with no task yet
 * counts a chainless contention; a full table counts into "other". The task and its stack are this thread's. */
#define _GNU_SOURCE /* pthread_getattr_np: this thread's stack, the task's own */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "hal/spinlock.h"
#include "kernel/profiler/lock_sites.h"
#include "kernel/task.h"
#include "unit_main.h"

#define RELAX_NS 250

/* ---- the kernel around the slow path: this thread as the current task ------------------------------------- */

static struct task self;
static bool no_task;

struct task *task_current(void) { return no_task ? NULL : &self; }

struct stack_bounds task_stack_bounds(const struct task *task)
{
    return (struct stack_bounds){ (uintptr_t)task->stack, (uintptr_t)task->stack + task->stack_size };
}

/* ---- the other holder: lets go after a few relaxes --------------------------------------------------------- */

static spinlock_t lock;
static unsigned relaxes, release_after;

static void holder_lets_go(void)
{
    relaxes++;
    fake_time_ns += RELAX_NS;
    if (relaxes == release_after) { /* the other CPU's unlock, less its irq_restore: its interrupts are its own */
        lock.owner_cpu = -1;
        atomic_store_explicit(&lock.locked, 0, memory_order_release);
    }
}

static void held_by_another_until(unsigned n)
{
    atomic_store(&lock.locked, 1);
    lock.owner_cpu = 3;
    relaxes = 0;
    release_after = n;
}

static struct block_row rows[BLOCK_SITES];
static struct block_row other;

static unsigned snapshot(void) { return block_table_snapshot(&lock_sites, rows, BLOCK_SITES, &other); }

static int setup(void **state)
{
    (void)state;
    memset(&lock_sites, 0, sizeof lock_sites);
    lock = (spinlock_t)SPINLOCK_INIT;
    no_task = false;
    fake_time_ns = 1000000;
    fake_cpu_index = 1;
    fake_cpu_relax_hook = holder_lets_go;
    relaxes = release_after = 0;
    pthread_attr_t attr;
    assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
    assert_int_equal(pthread_attr_getstack(&attr, &self.stack, &self.stack_size), 0);
    pthread_attr_destroy(&attr);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_cpu_relax_hook = NULL;
    fake_cpu_index = 0;
    return 0;
}

/* The call site: the lock taken here, out of line, so the chain's first return address is inside this function and
 * its second is where the test called it (*caller). */
static __attribute__((noinline)) unsigned long take(uintptr_t *caller)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    *caller = (uintptr_t)__builtin_return_address(0);
    return flags;
}

static void test_a_contended_acquisition_counts_once_under_the_waiters_chain(void **state)
{
    (void)state;
    held_by_another_until(4);
    uintptr_t caller;
    unsigned long flags = take(&caller);
    assert_int_equal(relaxes, 4);
    assert_int_equal(atomic_load(&lock.locked), 1); /* ours now */
    assert_int_equal(lock.owner_cpu, 1);
    assert_false(irq_enabled());
    spin_unlock_irqrestore(&lock, flags);
    assert_true(irq_enabled());

    assert_int_equal(snapshot(), 1);
    assert_int_equal(rows[0].count, 1);
    assert_int_equal(rows[0].delay_ns, 4 * RELAX_NS); /* the spin, from the failed exchange to the lock taken */
    assert_int_equal(rows[0].waiting_on, TASK_WAIT_NONE);
    assert_true(rows[0].nframes >= 2);
    assert_true(rows[0].frames[0] > (uintptr_t)take && rows[0].frames[0] < (uintptr_t)take + 512);
    assert_int_equal(rows[0].frames[1], caller);
    assert_int_equal(other.count, 0);
}

static void test_the_same_site_again_is_the_same_entry(void **state)
{
    (void)state;
    uintptr_t caller = 0;
    for (unsigned i = 0; i < 3; i++) {
        held_by_another_until(2);
        spin_unlock_irqrestore(&lock, take(&caller));
    }
    assert_int_equal(snapshot(), 1);
    assert_int_equal(rows[0].count, 3);
    assert_int_equal(rows[0].delay_ns, 3 * 2 * RELAX_NS);
}

static void test_an_uncontended_acquisition_counts_nothing(void **state)
{
    (void)state;
    uintptr_t caller;
    for (unsigned i = 0; i < 100; i++)
        spin_unlock_irqrestore(&lock, take(&caller));
    assert_int_equal(relaxes, 0);
    assert_int_equal(snapshot(), 0);
    assert_int_equal(other.count, 0);
}

static void test_a_refused_trylock_counts_nothing(void **state)
{
    (void)state;
    held_by_another_until(1);
    unsigned long flags;
    for (unsigned i = 0; i < 100; i++)
        assert_false(spin_trylock_irqsave(&lock, &flags));
    assert_int_equal(relaxes, 0); /* never waited */
    assert_int_equal(snapshot(), 0);
    assert_int_equal(other.count, 0);
    assert_true(irq_enabled());
}

static void test_a_cpu_with_no_task_counts_a_chainless_contention(void **state)
{
    (void)state;
    no_task = true;
    held_by_another_until(3);
    uintptr_t caller;
    spin_unlock_irqrestore(&lock, take(&caller));
    assert_int_equal(snapshot(), 1);
    assert_int_equal(rows[0].nframes, 0);
    assert_int_equal(rows[0].count, 1);
    assert_int_equal(rows[0].delay_ns, 3 * RELAX_NS);
}

static void test_a_full_table_counts_into_other(void **state)
{
    (void)state;
    for (uintptr_t i = 0; i < BLOCK_SITES; i++) {
        const uintptr_t chain[] = { 0x100000 + i * 16 };
        block_table_add(&lock_sites, chain, 1, TASK_WAIT_NONE, 1);
    }
    held_by_another_until(5);
    uintptr_t caller;
    spin_unlock_irqrestore(&lock, take(&caller));
    assert_int_equal(snapshot(), BLOCK_SITES);
    assert_int_equal(other.count, 1);
    assert_int_equal(other.delay_ns, 5 * RELAX_NS);
    for (unsigned i = 0; i < BLOCK_SITES; i++)
        assert_int_equal(rows[i].count, 1); /* the chains it had go on as they were */
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL, test_a_contended_acquisition_counts_once_under_the_waiters_chain,
               test_the_same_site_again_is_the_same_entry, test_an_uncontended_acquisition_counts_nothing,
               test_a_refused_trylock_counts_nothing, test_a_cpu_with_no_task_counts_a_chainless_contention,
               test_a_full_table_counts_into_other)
