/* arch/x86_64/lapic_regs.h: the local APIC's registers by their xAPIC MMIO offsets, and the two encodings that
 * differ in x2APIC mode -- a register's MSR (0x800 + offset / 16) and the interrupt command, one 64-bit write with
 * a 32-bit destination instead of two 32-bit writes with an 8-bit one. Pure, so host tests check them. */
#ifndef ARCH_X86_64_LAPIC_REGS_H
#define ARCH_X86_64_LAPIC_REGS_H

#include <stdint.h>

#define LAPIC_ID 0x020
#define LAPIC_TPR 0x080
#define LAPIC_EOI 0x0B0
#define LAPIC_SVR 0x0F0
#define LAPIC_ICR_LOW 0x300
#define LAPIC_ICR_HIGH 0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_PERFCNT 0x340
#define LAPIC_TIMER_INITIAL 0x380
#define LAPIC_TIMER_CURRENT 0x390
#define LAPIC_TIMER_DIVIDE 0x3E0

#define X2APIC_MSR_BASE 0x800u
#define APIC_BASE_ENABLE (1u << 11) /* IA32_APIC_BASE: the APIC globally enabled */
#define APIC_BASE_EXTD (1u << 10)   /* IA32_APIC_BASE: x2APIC mode (with ENABLE) */
#define CPUID1_ECX_X2APIC (1u << 21)

/* The highest APIC id an xAPIC's 8-bit destination reaches; 0xFF is its broadcast. */
#define XAPIC_MAX_ID 0xFEu

/* The MSR that holds xAPIC register offset reg in x2APIC mode: EOI 0x0B0 is 0x80B, the ICR 0x300 is 0x830. */
static inline uint32_t lapic_x2apic_msr(uint32_t reg) { return X2APIC_MSR_BASE + (reg >> 4); }

/* The x2APIC ICR value: destination in the high half, the command (vector, delivery mode, level, shorthand)
 * in the low half. */
static inline uint64_t lapic_x2apic_icr(uint32_t dest, uint32_t low) { return ((uint64_t)dest << 32) | low; }

/* The xAPIC ICR's high word: the destination in bits 24-31 (ids above XAPIC_MAX_ID cannot be named). */
static inline uint32_t lapic_xapic_icr_high(uint32_t dest) { return dest << 24; }

/* The APIC id in the ID register's value: bits 24-31 in xAPIC mode, all 32 bits in x2APIC mode. */
static inline uint32_t lapic_id_of(uint32_t id_reg, int x2apic) { return x2apic ? id_reg : id_reg >> 24; }

#endif
