/* kernel/panic.h: the end of the line for broken invariants. panic() prints "panic: <reason>" and a backtrace
 * of "        <- Symbol+0xoff" lines (the profiler report's format), then stops every CPU. */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdbool.h>
#include <stdint.h>
#include "hal/kernel_entry.h"

/* panic(), panic_at() (exceptions and genuine NMIs: the interrupted context's CPU, task, registers and
 * backtrace) and panic_active() are entry points the arch layer calls too: hal/kernel_entry.h. */

/* The backtrace's lines are backtrace_print's (kernel/symbols.h), shared with `tasks`. */

#endif
