/* arch/x86_64/cpu_inline.h: the hal/cpu.h functions x86_64 defines inline, included by hal/cpu.h alone. Inline
 * because the instruction must stay in its caller's frame: a tick that samples a halted CPU names the idle
 * loop (sched_idle_loop) as its leaf, and a yielding task's saved context is its own, not a helper's. */
#ifndef ARCH_X86_64_CPU_INLINE_H
#define ARCH_X86_64_CPU_INLINE_H

#include "arch/x86_64/arch.h"

/* STI's one-instruction interrupt shadow covers HLT: an interrupt pending after STI is taken only once HLT
 * has begun, so it wakes the halt instead of slipping in between. */
static inline void cpu_wait_for_interrupt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }

/* The yield vector (VEC_YIELD) enters interrupt_dispatch like any interrupt, so the switch saves and restores
 * the same struct context a preemption does. */
static inline void cpu_yield(void) { __asm__ volatile("int %0" ::"i"(VEC_YIELD) : "memory"); }

#endif
