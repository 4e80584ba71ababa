/* arch/x86_64/isr.S: the interrupt entry stubs. Every vector pushes the same struct context
 * (arch/x86_64/context.h) and calls interrupt_dispatch(ctx), which returns the context to resume -- the same
 * one, or another task's: that return value is the whole context switch. Also the AP's 64-bit entry. */

    .text
    .code64

/* The general registers in the reverse of isr_common's order: struct context from its start to vector. */
.macro POP_GPRS
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
.endm

/* Vectors where the CPU pushes an error code: 8, 10-14, 17, 21, 29, 30. */
.macro ISR_STUB n
    .align 16
isr_stub_\n:
    .if (\n == 8) || (\n >= 10 && \n <= 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
    pushq $\n
    .else
    pushq $0
    pushq $\n
    .endif
    jmp isr_common
.endm

.altmacro
.macro ISR_STUB_AT n
    ISR_STUB %n
.endm
.set vec, 0
.rept 256
    ISR_STUB_AT %vec
    .set vec, vec + 1
.endr

    .global isr_common  /* also entered by cpu_yield (arch/x86_64/cpu_inline.h) with a frame built by hand */
isr_common:
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    cld
    movq %rsp, %rdi
    call interrupt_dispatch
    testq $1, %rax
    jnz resume_in_nmi
    movq %rax, %rsp
    .global isr_resume
isr_resume:
    POP_GPRS
    addq $16, %rsp
    iretq

/* An exception fixed up inside the NMI handler (interrupt_dispatch returned the context with its low bit
 * set): resume it without IRET, which would end the NMI's blocking of NMIs. Same privilege, so the return is
 * a popf and a ret on the interrupted stack, with rip and rflags from this CPU's percpu (resume_rflags at
 * %gs:16, resume_rip at %gs:24): the exception's own frame below that stack is spent by then. */
resume_in_nmi:
    leaq -1(%rax), %rsp
    POP_GPRS
    addq $16, %rsp          /* vector, error code: now rip, cs, rflags, rsp, ss */
    movq 24(%rsp), %rsp     /* the interrupted stack */
    pushq %gs:24
    pushq %gs:16
    popfq
    retq

/* The addresses of the 256 stubs, for the IDT. */
.macro STUB_ADDR n
    .quad isr_stub_\n
.endm
.macro STUB_ADDR_AT n
    STUB_ADDR %n
.endm
    .section .rodata
    .align 8
    .global isr_stub_table
isr_stub_table:
.set vec, 0
.rept 256
    STUB_ADDR_AT %vec
    .set vec, vec + 1
.endr

    .section .note.GNU-stack, "", @progbits
