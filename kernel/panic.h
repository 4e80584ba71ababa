/* kernel/panic.h: the end of the line for broken invariants. panic() prints "panic: <reason>" and a backtrace
 * of "        <- Symbol+0xoff" lines (the profiler report's format), then stops every CPU. */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/sink.h"
#include "kernel/stacktrace.h"

__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);

struct context;
/* For exceptions and genuine NMIs: the reason, then the interrupted context's CPU, task, registers and the
 * backtrace from its instruction pointer. */
__attribute__((noreturn, format(printf, 2, 3))) void panic_at(const struct context *ctx, const char *fmt, ...);

/* True once any CPU has begun to panic: the others, stopped by NMI, check it and halt. */
bool panic_active(void);

/* Prints one "        <- Symbol+0xoff" line per return address (a raw address when it does not resolve). */
void backtrace_print(struct sink *out, const uintptr_t *addrs, int count);

#endif
