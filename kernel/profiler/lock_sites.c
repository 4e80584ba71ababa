/* kernel/profiler/lock_sites.c: the spinlock's slow path (hal/spinlock.h's spin_lock_contended) and the table it
 * counts into (kernel/profiler/lock_sites.h). It runs in task context with interrupts masked, between the failed
 * exchange and the lock's first holder-free moment, so it does what that context allows and no more: a walk of
 * the task's own stack, two clock reads and the block table's atomics -- no lock (it is one), no allocation, no
 * printing, no symbol lookup. */
#include "kernel/profiler/lock_sites.h"

#include "hal/cpu.h"
#include "hal/spinlock.h"
#include "kernel/task.h"

struct block_table lock_sites;

/* noinline: the frame the walk starts from must be this function's, so the chain's first return address is
 * the call site of spin_lock_irqsave (inlined into its caller). */
__attribute__((noinline)) void spin_lock_contended(spinlock_t *lock)
{
    int64_t began = time_ns();
    /* The chain first, while the lock is held by another anyway: the walk costs the waiter's time, not the
     * lock's. Only inside the task's own stack; a CPU with no task yet (its bring-up) counts a chainless wait. */
    uintptr_t chain[BLOCK_SITE_FRAMES];
    unsigned frames = task_chain_from_frame(task_current(), __builtin_frame_address(0), chain, BLOCK_SITE_FRAMES);
    /* test and test-and-set: wait reading (the line stays shared), then one exchange for it */
    do {
        while (atomic_load_explicit(&lock->locked, memory_order_relaxed))
            cpu_relax();
    } while (atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire));
    block_table_add(&lock_sites, chain, frames, TASK_WAIT_NONE, time_ns() - began);
}
