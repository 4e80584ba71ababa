/* arch/x86_64/ap_trampoline.S: what an application processor runs after the startup IPI. The bytes between
 * ap_trampoline_start and ap_trampoline_end are copied to AP_TRAMPOLINE_ADDR (0x8000, SIPI vector 0x08):
 * real mode -> protected mode -> long mode on the boot CPU's page tables, then a jump to ap_entry64 with the
 * stack the boot CPU prepared. Everything is addressed relative to the copy, so the code is position-free. */

#define TRAMP 0x8000
#define REL(sym) (TRAMP + (sym) - ap_trampoline_start)

    .section .rodata
    .code16
    .global ap_trampoline_start, ap_trampoline_end
ap_trampoline_start:
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    lgdtl REL(tramp_gdt_ptr)
    movl %cr0, %eax
    orl $1, %eax
    movl %eax, %cr0
    ljmpl $0x08, $REL(tramp_pm32)

    .code32
tramp_pm32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl %cr4, %eax
    orl $(1 << 5), %eax
    movl %eax, %cr4
    movl REL(tramp_cr3), %eax
    movl %eax, %cr3
    movl $0xC0000080, %ecx
    rdmsr
    orl $((1 << 8) | (1 << 11)), %eax
    wrmsr
    movl %cr0, %eax
    orl $((1 << 31) | (1 << 16)), %eax
    movl %eax, %cr0
    ljmpl $0x18, $REL(tramp_lm64)

    .code64
tramp_lm64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movq REL(tramp_stack), %rsp
    xorq %rbp, %rbp
    pushq $0            /* a zero "return address": stack walks end here, and rsp is ABI-aligned at entry */
    movq REL(tramp_entry), %rax
    movq REL(tramp_cpu), %rdi
    jmp *%rax

    .align 16
tramp_gdt:
    .quad 0
    .quad 0x00CF9A000000FFFF   /* 0x08: 32-bit code */
    .quad 0x00CF92000000FFFF   /* 0x10: data */
    .quad 0x00AF9A000000FFFF   /* 0x18: 64-bit code */
tramp_gdt_ptr:
    .short tramp_gdt_ptr - tramp_gdt - 1
    .long REL(tramp_gdt)

    /* Filled in by the boot CPU for each AP (offsets exported below). */
    .align 8
tramp_cr3:   .quad 0
tramp_stack: .quad 0
tramp_entry: .quad 0
tramp_cpu:   .quad 0
ap_trampoline_end:

    .global ap_tramp_cr3_off, ap_tramp_stack_off, ap_tramp_entry_off, ap_tramp_cpu_off
    .align 4
ap_tramp_cr3_off:   .long tramp_cr3 - ap_trampoline_start
ap_tramp_stack_off: .long tramp_stack - ap_trampoline_start
ap_tramp_entry_off: .long tramp_entry - ap_trampoline_start
ap_tramp_cpu_off:   .long tramp_cpu - ap_trampoline_start

    .section .note.GNU-stack, "", @progbits
