/* tests/bench/lock_cost.c: the driver tests/bench/lock_cost.sh runs to measure what the lock profile costs a
 * spinlock, built for the host with the kernel's own code generation for the kernel's sources:
 *   uncontended -- acquire_release: spin_lock_irqsave and spin_unlock_irqrestore of a free lock (hal/spinlock.h,
 *                  inline as in every caller): the exchange, its test and branch, the owner's store, the release;
 *   contended   -- acquire_contended: the same on a lock another CPU holds, let go at the waiter's first
 *                  cpu_relax (the fake's hook), so the acquisition goes through spin_lock_contended
 *                  (kernel/profiler/lock_sites.c): the walk of the waiter's chain, the spin, two clock reads and
 *                  the add to the lock table (kernel/profiler/block_sites.c), always the same chain of 4 frames,
 *                  as a lock contended at one call site is.
 * What is faked is hal/'s (tests/unit/fake_hal.c): irq_save, irq_restore and cpu_index are calls here (pushf/cli,
 * popf and a %gs load on the machine), time_ns a load (RDTSC and a multiply there); the script counts the
 * kernel's own instructions apart from them. The current task and its stack are this thread's. Prints "calls N"
 * for the script to divide callgrind's count by, and checks the work was real (the lock taken every time; N
 * contentions counted under one chain of 4 frames, none uncontended) and exits non-zero if not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_task.h"
#include "fake_hal.h"
#include "hal/spinlock.h"
#include "kernel/profiler/lock_sites.h"

static void fail(const char *what)
{
    fprintf(stderr, "lock_cost: %s\n", what);
    exit(1);
}

static spinlock_t lock = SPINLOCK_INIT;

/* The other CPU lets go as the waiter first relaxes. */
static void holder_lets_go(void) { atomic_store_explicit(&lock.locked, 0, memory_order_release); }

__attribute__((noinline)) static void acquire_release(void)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    spin_unlock_irqrestore(&lock, flags);
}

__attribute__((noinline)) static void acquire_contended(void)
{
    atomic_store_explicit(&lock.locked, 1, memory_order_relaxed); /* held by another */
    unsigned long flags = spin_lock_irqsave(&lock);
    spin_unlock_irqrestore(&lock, flags);
}

/* Two frames between main and the acquisition, so every walk has its 4 frames inside this program's own. */
__attribute__((noinline)) static void contend(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        acquire_contended();
}

__attribute__((noinline)) static void run(const char *mode, unsigned long n)
{
    if (strcmp(mode, "uncontended") == 0) {
        for (unsigned long i = 0; i < n; i++)
            acquire_release();
    } else {
        fake_cpu_relax_hook = holder_lets_go;
        contend(n);
        fake_cpu_relax_hook = NULL;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "uncontended") != 0 && strcmp(argv[1], "contended") != 0) ||
        atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: lock_cost uncontended|contended N\n");
        return 2;
    }
    unsigned long n = (unsigned long)atol(argv[2]);
    bench_thread_as_task("lock_cost");
    fake_time_step_ns = 100; /* each clock read 100 ns on: every spin has a length */
    run(argv[1], n);
    if (atomic_load(&lock.locked) || lock.owner_cpu != -1)
        fail("the lock was not let go");
    static struct block_row rows[BLOCK_SITES];
    struct block_row other;
    unsigned count = block_table_snapshot(&lock_sites, rows, BLOCK_SITES, &other);
    bool contended = strcmp(argv[1], "contended") == 0;
    if (other.count || count != (contended ? 1u : 0u))
        fail("the lock table holds other chains than the one contended");
    if (contended && (rows[0].count != n || rows[0].nframes != BLOCK_SITE_FRAMES || rows[0].delay_ns == 0))
        fail("the contentions were not all counted under one chain of 4 frames with their spin");
    printf("calls %lu\n", n);
    return 0;
}
