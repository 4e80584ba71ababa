/* arch/x86_64/cpu_inline.h: the hal/cpu.h functions x86_64 defines inline, included by hal/cpu.h alone. Inline
 * because the instruction must stay in its caller's frame: a tick that samples a halted CPU names the idle
 * loop (sched_idle_loop) as its leaf, and a yielding task's saved context is its own, not a helper's. */
#ifndef ARCH_X86_64_CPU_INLINE_H
#define ARCH_X86_64_CPU_INLINE_H

#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"

/* STI's one-instruction interrupt shadow covers HLT: an interrupt pending after STI is taken only once HLT
 * has begun, so it wakes the halt instead of slipping in between. */
static inline void cpu_wait_for_interrupt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }

/* Yielding enters interrupt_dispatch as the yield vector (VEC_YIELD), so the switch saves and restores the same
 * struct context a preemption does. The interrupt frame is built by hand -- what an INT would push, on a stack
 * aligned to 16 as the CPU aligns it -- and the stub's path taken with a jump: PVM, the software KVM this
 * project's machines have, cannot emulate INT n in long mode and stops the guest at the first one ("KVM internal
 * error ... emulation failure"); IRETQ back from the switch is an ordinary instruction everywhere. */
static inline void cpu_yield(void)
{
    __asm__ volatile("movq %%rsp, %%rax\n\t"
                     "andq $-16, %%rsp\n\t"
                     "movl %%ss, %%edx\n\t"
                     "pushq %%rdx\n\t"          /* ss */
                     "pushq %%rax\n\t"          /* rsp before the frame */
                     "pushfq\n\t"               /* rflags, interrupts as they were */
                     "cli\n\t"                  /* an interrupt gate clears IF */
                     "pushq %[cs]\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"          /* rip: resume after the jump */
                     "pushq $0\n\t"             /* no error code */
                     "pushq %[vector]\n\t"
                     "jmp isr_common\n\t"
                     "1:"
                     :
                     : [cs] "i"(SEL_KCODE), [vector] "i"(VEC_YIELD)
                     : "rax", "rdx", "memory", "cc");
}

#endif
