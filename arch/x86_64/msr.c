/* arch/x86_64/msr.c: RDMSR and WRMSR that survive a #GP (arch/x86_64/msr.h), through the exception-fixup
 * table of arch/x86_64/fixup.c. Host tests replace this file with tests/unit/fake_cpu.c. */
#include "arch/x86_64/msr.h"

#include "arch/x86_64/fixup.h"

/* The error flag is set before the instruction and cleared by the one after it; a fault lands past the
 * clear (the fixup table entry {1b, 2b}), so the flag says whether the access completed. RDMSR and WRMSR leave
 * EDX:EAX alone when they fault, and the exception path restores every general register, so nothing else
 * changes. The flag is an early-clobber output so the compiler never gives it ECX, EAX or EDX. */
bool rdmsr_safe(uint32_t msr, uint64_t *v)
{
    uint32_t lo = 0, hi = 0;
    uint32_t fault;
    __asm__ volatile("movl $1, %[fault]\n\t"
                     "1: rdmsr\n\t"
                     "xorl %[fault], %[fault]\n\t"
                     "2:\n\t"
                     EX_TABLE_ENTRY("1b", "2b")
                     : [fault] "=&r"(fault), "+a"(lo), "+d"(hi)
                     : "c"(msr)
                     : "memory");
    if (fault)
        return false;
    *v = ((uint64_t)hi << 32) | lo;
    return true;
}

bool wrmsr_safe(uint32_t msr, uint64_t v)
{
    uint32_t fault;
    __asm__ volatile("movl $1, %[fault]\n\t"
                     "1: wrmsr\n\t"
                     "xorl %[fault], %[fault]\n\t"
                     "2:\n\t"
                     EX_TABLE_ENTRY("1b", "2b")
                     : [fault] "=&r"(fault)
                     : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
                     : "memory");
    return !fault;
}
