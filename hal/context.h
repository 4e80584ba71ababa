/* hal/context.h: portable access to an interrupted context -- its program counter, stack pointer and frame
 * pointer -- so the profiler and stack traces need not know the register names of the architecture. */
#ifndef HAL_CONTEXT_H
#define HAL_CONTEXT_H

#include <stdint.h>
#include "arch/x86_64/context.h"

static inline uintptr_t context_pc(const struct context *ctx) { return ctx->rip; }
static inline uintptr_t context_sp(const struct context *ctx) { return ctx->rsp; }
static inline uintptr_t context_fp(const struct context *ctx) { return ctx->rbp; }

struct sink;
/* Prints the general registers of ctx, a few to a line (arch/x86_64/interrupts.c). */
void context_print(struct sink *out, const struct context *ctx);

#endif
