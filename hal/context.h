/* hal/context.h: portable access to an interrupted context -- its program counter, stack pointer and frame
 * pointer -- so the profiler and stack traces need not know the register names of the architecture. */
#ifndef HAL_CONTEXT_H
#define HAL_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86_64/context.h"

static inline uintptr_t context_pc(const struct context *ctx) { return ctx->rip; }
static inline uintptr_t context_sp(const struct context *ctx) { return ctx->rsp; }
static inline uintptr_t context_fp(const struct context *ctx) { return ctx->rbp; }
/* Whether the interrupted code had interrupts enabled (RFLAGS.IF). */
static inline bool context_irqs_enabled(const struct context *ctx) { return (ctx->rflags & (1u << 9)) != 0; }
/* Whether the interrupted code was itself an interrupt handler (an NMI that landed in a device interrupt or
 * the tick). Interrupt or NMI context, about ctx just taken on this CPU. */
bool context_in_interrupt(const struct context *ctx);
/* Where a held-off interrupt is let in: the name of the instruction that ends just before pc when it
 * re-enables interrupts ("popf", or "sti" followed by one one-byte instruction, its shadow), NULL otherwise.
 * Reads the two bytes before pc: the caller makes sure they are kernel text. */
const char *irq_enable_before(uintptr_t pc);

struct sink;
/* Prints the general registers of ctx, a few to a line (arch/x86_64/interrupts.c). */
void context_print(struct sink *out, const struct context *ctx);

#endif
