/* arch/x86_64/boot.S: the multiboot2 header and the boot CPU's way from GRUB's 32-bit protected mode into
 * long mode: identity page tables for the first 4 GiB (2 MiB pages, with the first 2 MiB in 4 KiB pages so
 * page 0 can stay unmapped and a NULL dereference faults), PAE, EFER.LME, paging, a 64-bit GDT, then kmain. */

#define MB2_MAGIC      0xE85250D6
#define MB2_ARCH_I386  0
#define MB2_BOOT_MAGIC 0x36D76289

    .section .multiboot, "a"
    .align 8
mb2_header:
    .long MB2_MAGIC
    .long MB2_ARCH_I386
    .long mb2_header_end - mb2_header
    .long -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    /* Framebuffer tag, optional, no preferred size or depth: tells GRUB the kernel can use a linear
     * framebuffer. Under UEFI (no VGA text mode) GRUB then hands over the firmware's GOP mode as it is; without
     * the tag it warns that the OS gets no console. On a BIOS grub.cfg sets gfxpayload=text, so the BIOS boot
     * stays in VGA text mode (and GRUB describes it in the framebuffer tag as EGA text). */
    .short 5                   /* MULTIBOOT_HEADER_TAG_FRAMEBUFFER */
    .short 1                   /* optional: boot even if no framebuffer can be set */
    .long 20
    .long 0, 0, 0              /* width, height, depth: no preference */
    .long 0                    /* pad: tags are 8-byte aligned */
    /* end tag */
    .short 0
    .short 0
    .long 8
mb2_header_end:

    .section .boot32, "ax"
    .code32
    .global _start
_start:
    cli
    cld
    movl $boot_stack_top, %esp
    movl %eax, boot_magic
    movl %ebx, boot_info_phys

    cmpl $MB2_BOOT_MAGIC, %eax
    jne no_multiboot

    /* PML4[0] -> PDPT */
    movl $boot_pdpt, %eax
    orl $0x3, %eax
    movl %eax, boot_pml4

    /* PDPT[0..3] -> PD0..PD3 */
    movl $boot_pd, %eax
    orl $0x3, %eax
    xorl %ecx, %ecx
1:  movl %eax, boot_pdpt(,%ecx,8)
    addl $4096, %eax
    incl %ecx
    cmpl $4, %ecx
    jne 1b

    /* 2048 PD entries of 2 MiB: present | writable | page size. The top GiB (0xC0000000..) holds the
     * LAPIC, IOAPIC and PCI holes: cache-disabled (PCD | PWT). */
    xorl %ecx, %ecx
2:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax
    cmpl $1536, %ecx
    jb 3f
    orl $0x18, %eax
3:  movl %eax, boot_pd(,%ecx,8)
    movl $0, boot_pd+4(,%ecx,8)
    incl %ecx
    cmpl $2048, %ecx
    jne 2b

    /* The first 2 MiB through a page table whose entry 0 stays clear: NULL faults. */
    movl $boot_pt0, %eax
    orl $0x3, %eax
    movl %eax, boot_pd
    movl $1, %ecx
4:  movl %ecx, %eax
    shll $12, %eax
    orl $0x3, %eax
    movl %eax, boot_pt0(,%ecx,8)
    incl %ecx
    cmpl $512, %ecx
    jne 4b

    /* PAE on, CR3, long mode enable (and NXE), paging on. */
    movl %cr4, %eax
    orl $(1 << 5), %eax
    movl %eax, %cr4
    movl $boot_pml4, %eax
    movl %eax, %cr3
    movl $0xC0000080, %ecx
    rdmsr
    orl $((1 << 8) | (1 << 11)), %eax
    wrmsr
    movl %cr0, %eax
    orl $((1 << 31) | (1 << 16) | 1), %eax   /* PG, WP, PE */
    movl %eax, %cr0

    lgdt boot_gdt_ptr
    ljmp $0x08, $long_mode_entry

no_multiboot:
    /* Not booted by a multiboot2 loader: say so on COM1 and stop. */
    movl $no_mb_msg, %esi
5:  movb (%esi), %al
    testb %al, %al
    jz 6f
    movw $0x3F8, %dx
    outb %al, %dx
    incl %esi
    jmp 5b
6:  hlt
    jmp 6b

    /* The 64-bit entry lives in .text so the symbol table resolves it: it is the outermost caller of every
     * backtrace on the boot CPU. */
    .text
    .code64
long_mode_entry:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movq $boot_stack_top, %rsp
    xorq %rbp, %rbp
    movl boot_info_phys, %edi
    call kmain
7:  cli
    hlt
    jmp 7b

    .section .rodata
no_mb_msg:
    .asciz "kprof: not loaded by a multiboot2 loader; boot the ISO through GRUB\r\n"

    .align 16
boot_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF   /* 0x08: 64-bit code */
    .quad 0x00CF92000000FFFF   /* 0x10: data */
boot_gdt_end:
boot_gdt_ptr:
    .short boot_gdt_end - boot_gdt - 1
    .quad boot_gdt

    .data
    .global boot_magic, boot_info_phys
boot_magic: .long 0
boot_info_phys:  .long 0

    .bss
    .align 4096
    .global boot_pml4
boot_pml4:  .skip 4096
boot_pdpt:  .skip 4096
boot_pd:    .skip 4096 * 4
boot_pt0:   .skip 4096
    .global boot_stack_bottom, boot_stack_top
boot_stack_bottom:
    .skip 16384
boot_stack_top:

    .section .note.GNU-stack, "", @progbits
