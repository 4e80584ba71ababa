/* kernel/stacktrace.h: call stacks from the frame-pointer chain (the whole kernel is built with
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer). The walk reads only memory inside the stack it was
 * given, follows only canonical, 8-byte aligned, strictly rising frame pointers, and stops at max frames, so a
 * corrupt stack ends the trace instead of faulting. Safe in interrupt and NMI context: no locks, no lookups. */
#ifndef KERNEL_STACKTRACE_H
#define KERNEL_STACKTRACE_H

#include <stdint.h>

/* The stack the walk may read: [lo, hi). */
struct stack_bounds {
    uintptr_t lo;
    uintptr_t hi;
};

/* Where instruction bytes may be read to recognise a function's first instruction or its ret: [lo, hi). */
struct text_bounds {
    uintptr_t lo;
    uintptr_t hi;
};

/* Return addresses from the frame chain starting at rbp: frame [rbp] is the saved rbp, [rbp+8] the return
 * address. Writes at most max addresses to out; returns how many. */
int stack_walk(uintptr_t rbp, const struct stack_bounds *stack, uintptr_t *out, int max);

/* The call chain of an interrupted context: out[0] = pc; then the callers. When pc sits on a function's
 * first instruction (push %rbp), on the mov %rsp,%rbp right after it, or on a ret, the frame of the function
 * itself is not (or no longer) on the chain, so the direct caller is taken from the stack pointer ([sp], or
 * [sp+8] after the push) before walking from rbp -- otherwise that caller would be skipped. pc's bytes are
 * read only when pc is inside text. Returns the number of addresses written (at least 1 when max >= 1). */
int stack_trace_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp, const struct stack_bounds *stack,
                     const struct text_bounds *text, uintptr_t *out, int max);

#endif
