/* kernel/symbols.c: address -> symbol lookup over a sorted symbol table, lookup by name, kernel_symtab(),
 * the table of the running kernel assembled from the generated arrays (build/syms.N.c) and the linker's
 * __text_start/__text_end, and the backtrace lines that print addresses through it. Owns nothing mutable
 * except the once-built descriptor of that table. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/cpu.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "kernel/symbols.h"

bool symtab_lookup(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit)
{
    if (tab == NULL || tab->count == 0 || addr < tab->text_start || addr >= tab->text_end)
        return false;

    /* Binary search for the first symbol above addr; the one before it is the last at or below addr. */
    uint32_t lo = 0, hi = tab->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (tab->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false; /* addr is in text but below the first symbol */

    const struct ksym *sym = &tab->syms[lo - 1];
    /* A known size bounds the symbol; past it lies padding or unnamed code, which must not be blamed on it.
     * Size 0 (assembly without .size) reaches the next symbol or text_end, both already excluded above. */
    if (sym->size != 0 && addr - sym->addr >= sym->size)
        return false;

    if (hit != NULL) {
        hit->name = tab->names + sym->name_offset;
        hit->start = sym->addr;
        hit->offset = addr - sym->addr;
    }
    return true;
}

bool symbol_resolve(uint64_t addr, struct symbol_hit *hit)
{
    return symtab_lookup(kernel_symtab(), addr, hit);
}

bool symtab_find(const struct symtab *tab, const char *name, uint64_t *addr)
{
    if (tab == NULL || name == NULL)
        return false;
    /* Linear: the table is sorted by address, and finding by name only serves tests and the shell. */
    for (uint32_t i = 0; i < tab->count; i++) {
        if (strcmp(tab->names + tab->syms[i].name_offset, name) == 0) {
            if (addr != NULL)
                *addr = tab->syms[i].addr;
            return true;
        }
    }
    return false;
}

#ifndef KPROF_HOST

/* Defined by arch/x86_64/linker.ld around .text. */
extern const char __text_start[], __text_end[];

/* kernel_symbol_count is a const object in another translation unit, not a constant expression, so the
 * descriptor cannot be a static initialiser; it is filled on first use. Several CPUs may race to that first
 * use: one wins the claim and fills it, the others wait for it to be published. */
enum { SYMTAB_UNBUILT, SYMTAB_BUILDING, SYMTAB_READY };
static struct symtab running_kernel_symtab;
static atomic_int running_kernel_symtab_state = SYMTAB_UNBUILT;

const struct symtab *kernel_symtab(void)
{
    if (atomic_load_explicit(&running_kernel_symtab_state, memory_order_acquire) == SYMTAB_READY)
        return &running_kernel_symtab;

    int expected = SYMTAB_UNBUILT;
    if (atomic_compare_exchange_strong_explicit(&running_kernel_symtab_state, &expected, SYMTAB_BUILDING,
                                                memory_order_acquire, memory_order_acquire)) {
        running_kernel_symtab.syms = kernel_symbols;
        running_kernel_symtab.count = kernel_symbol_count;
        running_kernel_symtab.names = kernel_symbol_names;
        running_kernel_symtab.text_start = (uint64_t)(uintptr_t)__text_start;
        running_kernel_symtab.text_end = (uint64_t)(uintptr_t)__text_end;
        atomic_store_explicit(&running_kernel_symtab_state, SYMTAB_READY, memory_order_release);
    } else {
        /* The builder is a handful of stores away from done. */
        while (atomic_load_explicit(&running_kernel_symtab_state, memory_order_acquire) != SYMTAB_READY)
            cpu_relax();
    }
    return &running_kernel_symtab;
}

#else

/* Host builds have no linked kernel image. This empty table keeps symbol_resolve() linkable in every unit
 * test; a test that wants symbol_resolve() to find names defines its own kernel_symtab(), which overrides
 * this weak one. */
__attribute__((weak)) const struct symtab *kernel_symtab(void)
{
    static const struct symtab no_symbols = { NULL, 0, "", 0, 0 };
    return &no_symbols;
}

#endif

bool symtab_lookup_return(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit)
{
    if (addr == 0 || !symtab_lookup(tab, addr - 1, hit))
        return false;
    hit->offset = addr - hit->start;
    return true;
}

void symbol_print_return(struct sink *out, const struct symtab *tab, uint64_t addr)
{
    struct symbol_hit hit;
    if (symtab_lookup_return(tab, addr, &hit))
        sink_printf(out, "%s+0x%llx", hit.name, (unsigned long long)hit.offset);
    else
        sink_printf(out, "0x%llx", (unsigned long long)addr);
}

void symbol_print_go_frame(struct sink *out, const struct symtab *tab, uint64_t addr, bool leaf)
{
    struct symbol_hit hit;
    if (leaf ? symtab_lookup(tab, addr, &hit) : symtab_lookup_return(tab, addr, &hit))
        sink_printf(out, "#\t%#llx\t%s+%#llx\n", (unsigned long long)addr, hit.name, (unsigned long long)hit.offset);
    else
        sink_printf(out, "#\t%#llx\n", (unsigned long long)addr);
}

void backtrace_print(struct sink *out, const uintptr_t *addrs, int count)
{
    for (int i = 0; i < count; i++) {
        sink_puts(out, "        <- ");
        symbol_print_return(out, kernel_symtab(), addrs[i]);
        sink_puts(out, "\n");
    }
}

void backtrace_print_pc(struct sink *out, uintptr_t pc)
{
    struct symbol_hit hit;
    if (symbol_resolve(pc, &hit))
        sink_printf(out, "        at %s+0x%llx\n", hit.name, (unsigned long long)hit.offset);
    else
        sink_printf(out, "        at 0x%llx\n", (unsigned long long)pc);
}
