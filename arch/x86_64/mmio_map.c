/* arch/x86_64/mmio_map.c: pci_map_bar (hal/pci.h) -- mapping a memory BAR that firmware placed above the
 * 4 GiB boot.S identity-maps (OVMF puts 64-bit BARs high: qemu-xhci's lands at 0xe000000000 under q35). The
 * range is identity-mapped in 2 MiB pages, cache-disabled, through page tables taken from the heap (itself
 * below 4 GiB, so identity-mapped). Only empty entries are filled: nothing mapped is changed, so no other CPU
 * can hold a stale translation of it (x86 never caches a not-present entry). Task context (it allocates). */
#include "arch/x86_64/x86.h"
#include "hal/pci.h"
#include "hal/spinlock.h"
#include "kernel/heap.h"

#include <string.h>

#define PTE_PRESENT 0x1ull
#define PTE_WRITE 0x2ull
#define PTE_PWT 0x8ull
#define PTE_PCD 0x10ull
#define PTE_LARGE 0x80ull
#define PTE_FRAME 0x000FFFFFFFFFF000ull
#define PAGE_2M 0x200000ull
#define PHYS_LIMIT (1ull << 46) /* beyond what any firmware of today assigns; keeps the walk in range */
#define IDENTITY_LIMIT 0x100000000ull

static spinlock_t map_lock = SPINLOCK_INIT;

/* The table entry e points to, made (zeroed) when absent; NULL when out of memory or e maps a large page. */
static uint64_t *next_table(volatile uint64_t *e)
{
    uint64_t v = *e;
    if (v & PTE_PRESENT)
        return (v & PTE_LARGE) ? 0 : (uint64_t *)(uintptr_t)(v & PTE_FRAME);
    uint64_t *t = kmalloc_aligned(4096, 4096);
    if (!t)
        return 0;
    memset(t, 0, 4096);
    *e = (uint64_t)(uintptr_t)t | PTE_PRESENT | PTE_WRITE;
    return t;
}

bool pci_map_bar(const struct pci_bar *bar, const char **why)
{
    if (bar->is_io || bar->base + bar->size <= IDENTITY_LIMIT)
        return true; /* ports, or inside the boot identity map */
    if (bar->size == 0 || bar->base + bar->size < bar->base || bar->base + bar->size > PHYS_LIMIT) {
        *why = "the BAR's range is not a physical address this kernel can map";
        return false;
    }
    uint64_t *pml4 = (uint64_t *)(uintptr_t)(read_cr3() & PTE_FRAME);
    uint64_t first = bar->base & ~(PAGE_2M - 1);
    bool ok = true;
    unsigned long flags = spin_lock_irqsave(&map_lock);
    for (uint64_t a = first; a < bar->base + bar->size && ok; a += PAGE_2M) {
        uint64_t *pdpt = next_table(&pml4[(a >> 39) & 511]);
        uint64_t *pd = pdpt ? next_table(&pdpt[(a >> 30) & 511]) : 0;
        if (!pd) {
            ok = false;
            break;
        }
        volatile uint64_t *pde = &pd[(a >> 21) & 511];
        if (!(*pde & PTE_PRESENT))
            *pde = a | PTE_PRESENT | PTE_WRITE | PTE_LARGE | PTE_PCD | PTE_PWT;
        else if ((*pde & (PTE_LARGE | PTE_FRAME)) != (PTE_LARGE | a))
            ok = false; /* already something else: leave it */
    }
    spin_unlock_irqrestore(&map_lock, flags);
    if (!ok)
        *why = "no memory for page tables, or the range overlaps a mapping of something else";
    return ok;
}
