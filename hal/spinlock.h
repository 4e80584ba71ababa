/* hal/spinlock.h: a ticket-free test-and-test-and-set spinlock that masks interrupts while held. For task
 * context only: interrupt and NMI handlers take no locks (docs/architecture.md, "Three rules";
 * tests/unit/test_profiler_sample_path.c checks the sample path takes none). A lock that is free is taken
 * inline with one exchange; one that is held is waited for out of line, in spin_lock_contended, which the
 * portable kernel provides (kernel/profiler/lock_sites.c) because it also counts the wait where it happened:
 * the lock profile, `locks` and /debug/pprof/mutex. */
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

/* The slow path, entered with interrupts masked after the fast path's exchange found lock held: spins until it
 * takes lock, then counts the wait (the caller's chain and the time spun) in the lock table. Out of line so the
 * uncontended acquisition stays an exchange and a compare, and so the walk starts at a frame of its own whose
 * return address is the caller's call site. */
void spin_lock_contended(spinlock_t *lock);

static inline unsigned long spin_lock_irqsave(spinlock_t *lock)
{
    unsigned long flags = irq_save();
    if (__builtin_expect(atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire), 0))
        spin_lock_contended(lock);
    lock->owner_cpu = (int)cpu_index();
    return flags;
}

/* One try, never a wait (and so nothing counted): true (interrupts masked, *flags to restore) when the lock was
 * free. For a caller that must not wait on whoever holds it -- a debugger on a stopped machine, whose holder
 * may be parked. */
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
