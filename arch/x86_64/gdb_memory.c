/* arch/x86_64/gdb_memory.c: memory as the debugger touches it. gdb's reads and writes never fault the
 * kernel: an address is checked canonical and every page of the range is looked up in the live page tables
 * (CR3) -- present, and writable for writes -- before a byte is touched. Breakpoint bytes (int3) are written
 * the same way, with CR0.WP lifted for a read-only text page. Which breakpoints exist is the stub's table
 * (gdbstub/breakpoints.c); this file only plants and removes the bytes. */
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/x86.h"
#include "kernel/lib/string.h"

#define CR0_WP (1ull << 16)
#define INT3 0xCC

#define PTE_PRESENT 0x1ull
#define PTE_WRITABLE 0x2ull
#define PTE_LARGE 0x80ull
#define PTE_ADDR 0x000FFFFFFFFFF000ull

static inline uint64_t read_cr0(void) { uint64_t v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline void write_cr0(uint64_t v) { __asm__ volatile("mov %0, %%cr0" ::"r"(v) : "memory"); }

/* Looks addr up in the live page tables: false when any level is not present; else *end is the end of the
 * page that maps it and *writable whether every level allows writes. The tables themselves are reached
 * through the identity map that holds them (the boot page tables in the kernel image). */
static bool page_lookup(uint64_t addr, uint64_t *end, bool *writable)
{
    if (!gdb_x86_canonical(addr))
        return false;
    uint64_t table = read_cr3() & PTE_ADDR;
    bool w = true;
    for (int level = 4; level >= 1; level--) {
        unsigned shift = 12 + 9 * (unsigned)(level - 1);
        const volatile uint64_t *entries = (const volatile uint64_t *)(uintptr_t)table;
        uint64_t e = entries[(addr >> shift) & 511];
        if (!(e & PTE_PRESENT))
            return false;
        w = w && (e & PTE_WRITABLE);
        if (level == 1 || ((level == 2 || level == 3) && (e & PTE_LARGE))) {
            uint64_t size = 1ull << shift;
            *end = (addr & ~(size - 1)) + size;
            *writable = w;
            return true;
        }
        table = e & PTE_ADDR;
    }
    return false;
}

bool gdb_x86_range_ok(uint64_t addr, size_t len, bool write)
{
    if (len == 0)
        return gdb_x86_canonical(addr);
    uint64_t last = addr + len - 1;
    if (last < addr || !gdb_x86_canonical(last))
        return false;
    for (uint64_t a = addr;;) {
        uint64_t end;
        bool w;
        if (!page_lookup(a, &end, &w) || (write && !w))
            return false;
        if (end == 0 || end > last)
            return true;
        a = end;
    }
}

bool gdb_x86_mem_read(uint64_t addr, void *buf, size_t len)
{
    if (!gdb_x86_range_ok(addr, len, false))
        return false;
    /* Word-wise (memcpy): gdb's dumps read kilobytes a packet, and every page was just found present. */
    memcpy(buf, (const void *)(uintptr_t)addr, len);
    return true;
}

bool gdb_x86_mem_write(uint64_t addr, const void *buf, size_t len)
{
    if (!gdb_x86_range_ok(addr, len, true))
        return false;
    const uint8_t *in = buf;
    for (size_t i = 0; i < len; i++)
        ((volatile uint8_t *)(uintptr_t)addr)[i] = in[i];
    return true;
}

/* One byte of code, on a present page: through CR0.WP cleared for the write if the page is read-only.
 * Interrupts are off on the CPU doing it (a session or a parked CPU). */
static bool poke_text(uint64_t addr, uint8_t byte)
{
    uint64_t end;
    bool w;
    if (!page_lookup(addr, &end, &w))
        return false;
    uint64_t cr0 = read_cr0();
    if (!w)
        write_cr0(cr0 & ~CR0_WP);
    *(volatile uint8_t *)(uintptr_t)addr = byte;
    if (!w)
        write_cr0(cr0);
    return true;
}

bool gdb_x86_peek(uint64_t addr, uint8_t *byte)
{
    uint64_t end;
    bool w;
    if (!page_lookup(addr, &end, &w))
        return false;
    *byte = *(const volatile uint8_t *)(uintptr_t)addr;
    return true;
}

bool gdb_x86_sw_break_plant(uint64_t addr, uint8_t *saved)
{
    uint8_t old;
    if (!gdb_x86_peek(addr, &old) || !poke_text(addr, INT3))
        return false;
    *saved = old;
    return true;
}

bool gdb_x86_sw_break_unplant(uint64_t addr, uint8_t saved)
{
    return poke_text(addr, saved);
}

bool gdb_x86_break_insn_at(uint64_t addr)
{
    uint8_t byte;
    return !gdb_x86_peek(addr, &byte) || byte == INT3;
}
