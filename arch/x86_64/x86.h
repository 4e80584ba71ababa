/* arch/x86_64/x86.h: single x86 instructions as inline functions -- port I/O, MSRs, CPUID, TSC, control
 * registers, interrupt flag. Only arch/x86_64 includes this. */
#ifndef ARCH_X86_64_X86_H
#define ARCH_X86_64_X86_H

#include <stdbool.h>
#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

static inline void cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(subleaf));
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t read_cr2(void) { uint64_t v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr3(void) { uint64_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline uint64_t read_rflags(void) { uint64_t v; __asm__ volatile("pushfq; popq %0" : "=r"(v)); return v; }
static inline uint64_t read_rbp(void) { uint64_t v; __asm__ volatile("mov %%rbp, %0" : "=r"(v)); return v; }
static inline uint64_t read_rsp(void) { uint64_t v; __asm__ volatile("mov %%rsp, %0" : "=r"(v)); return v; }

static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
/* The nop fills STI's one-instruction shadow, so an interrupt held off until here is taken right after it,
 * where irq_enable_site.c recognises the place (an STI before a RET would be let in at the caller). */
static inline void sti(void) { __asm__ volatile("sti; nop" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
static inline void pause(void) { __asm__ volatile("pause" ::: "memory"); }

#define MSR_APIC_BASE 0x1B
#define MSR_EFER 0xC0000080
#define MSR_GS_BASE 0xC0000101
#define MSR_KERNEL_GS_BASE 0xC0000102

#define RFLAGS_IF (1u << 9)

/* Kernel segment selectors (arch/x86_64/percpu.c). */
#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_TSS 0x18

#endif
