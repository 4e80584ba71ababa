/* arch/x86_64/context.h: the register frame the interrupt stubs (arch/x86_64/isr.S) push, lowest address
 * first. It is what an interrupted task's state looks like, what the scheduler switches, what exception
 * handlers print and what the profiler samples from. Keep in step with isr.S. */
#ifndef ARCH_X86_64_CONTEXT_H
#define ARCH_X86_64_CONTEXT_H

#include <stdint.h>

struct context {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error_code;
    /* pushed by the CPU */
    uint64_t rip, cs, rflags, rsp, ss;
};

_Static_assert(sizeof(struct context) == 22 * 8, "isr.S pushes 22 quadwords");

#endif
