/* kernel/profiler/lock_sites.h: where CPUs spun on spinlocks, and for how long, since boot
 * (kernel/profiler/lock_sites.c) -- Go's mutex profile in kprof's terms. A spin_lock_irqsave (hal/spinlock.h)
 * whose one exchange finds the lock held waits in spin_lock_contended, which counts one contention and the time
 * it spun under the first frames of its caller's chain (the call site that took the lock, then its callers).
 * The table is a block table (kernel/profiler/block_sites.h), the same fixed, lock-free kind the blocking calls
 * count into, with its own entries: `locks` prints it and /debug/pprof/mutex serves it
 * (kernel/profiler/block_profile.h), as contentions/count and delay/nanoseconds by chain. An acquisition that
 * did not wait, and spin_trylock_irqsave, count nothing. */
#ifndef KERNEL_PROFILER_LOCK_SITES_H
#define KERNEL_PROFILER_LOCK_SITES_H

#include "kernel/profiler/block_sites.h"

/* Every contended acquisition of the kernel's spinlocks, counted by spin_lock_contended. Its entries' waiting_on
 * is always TASK_WAIT_NONE: a lock is no blocking call. */
extern struct block_table lock_sites;

#endif
