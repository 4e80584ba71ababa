/* hal/spinlock.h: a ticket-free test-and-test-and-set spinlock that masks interrupts while held. For task
 * context only: interrupt and NMI handlers take no locks (docs/architecture.md, "Three rules";
 * tests/unit/test_profiler_sample_path.c checks the sample path takes none). */
#ifndef HAL_SPINLOCK_H
#define HAL_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include "hal/cpu.h"

typedef struct {
    atomic_int locked;
    int owner_cpu; /* for panics that find a lock held; -1 when free */
} spinlock_t;

#define SPINLOCK_INIT { 0, -1 }

static inline unsigned long spin_lock_irqsave(spinlock_t *lock)
{
    unsigned long flags = irq_save();
    for (;;) {
        if (!atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire))
            break;
        while (atomic_load_explicit(&lock->locked, memory_order_relaxed))
            cpu_relax();
    }
    lock->owner_cpu = (int)cpu_index();
    return flags;
}

/* One try, never a wait: true (interrupts masked, *flags to restore) when the lock was free. For a caller
 * that must not wait on whoever holds it -- a debugger on a stopped machine, whose holder may be parked. */
static inline bool spin_trylock_irqsave(spinlock_t *lock, unsigned long *flags)
{
    *flags = irq_save();
    if (atomic_load_explicit(&lock->locked, memory_order_relaxed) ||
        atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire)) {
        irq_restore(*flags);
        return false;
    }
    lock->owner_cpu = (int)cpu_index();
    return true;
}

static inline void spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
    lock->owner_cpu = -1;
    atomic_store_explicit(&lock->locked, 0, memory_order_release);
    irq_restore(flags);
}

#endif
