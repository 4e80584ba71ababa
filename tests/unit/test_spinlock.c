/* tests/unit/test_spinlock.c: hal/spinlock.h's one-try lock, which every driver's transmit_polled
 * (kernel/drivers/) takes: a free lock is taken with interrupts masked and its owner noted; a held one is
 * refused at once, the interrupt state left as it was and the holder untouched, however often it is tried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hal/spinlock.h"
#include "unit_main.h"

extern unsigned fake_cpu_index;

static void test_a_free_lock_is_taken_with_interrupts_masked(void **state)
{
    (void)state;
    spinlock_t lock = SPINLOCK_INIT;
    assert_true(irq_enabled());
    fake_cpu_index = 2;
    unsigned long flags;
    assert_true(spin_trylock_irqsave(&lock, &flags));
    assert_false(irq_enabled());
    assert_int_equal(lock.owner_cpu, 2);
    spin_unlock_irqrestore(&lock, flags);
    assert_true(irq_enabled());
    assert_int_equal(lock.owner_cpu, -1);
    fake_cpu_index = 0;
}

static void test_a_held_lock_is_refused_at_once_and_changes_nothing(void **state)
{
    (void)state;
    spinlock_t lock = SPINLOCK_INIT;
    fake_cpu_index = 1;
    unsigned long held = spin_lock_irqsave(&lock); /* the holder: a CPU parked inside transmit */
    fake_cpu_index = 3;
    unsigned long before = irq_save();
    irq_restore(before);
    for (int i = 0; i < 1000; i++) {
        unsigned long flags = 12345;
        assert_false(spin_trylock_irqsave(&lock, &flags));
        assert_int_equal(lock.owner_cpu, 1);
    }
    assert_int_equal(irq_save(), before); /* the refusals gave back the state they found */
    irq_restore(before);
    fake_cpu_index = 1;
    spin_unlock_irqrestore(&lock, held);
    assert_true(irq_enabled());
    unsigned long flags;
    assert_true(spin_trylock_irqsave(&lock, &flags)); /* free again: taken */
    spin_unlock_irqrestore(&lock, flags);
    fake_cpu_index = 0;
}

UNIT_MAIN(NULL, NULL,
          test_a_free_lock_is_taken_with_interrupts_masked, test_a_held_lock_is_refused_at_once_and_changes_nothing)
