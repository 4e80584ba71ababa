/* kernel/heap.h: the kernel heap -- kmalloc/kfree over one region handed over at boot from the multiboot2
 * memory map, with statistics for `mem` and every allocation's chain for the heap profile. Task context only (it
 * takes a spinlock and walks the caller's stack); never from an interrupt. */
#ifndef KERNEL_HEAP_H
#define KERNEL_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_stats {
    size_t total_bytes;    /* size of the region under management */
    size_t used_bytes;     /* bytes handed out, as requested by callers */
    size_t overhead_bytes; /* headers and alignment padding of live blocks */
    size_t free_bytes;     /* bytes in free blocks */
    size_t largest_free;   /* largest single free block */
    size_t peak_used;      /* high-water mark of used_bytes */
    uint64_t allocs;       /* successful allocations since boot */
    uint64_t frees;        /* frees since boot */
    uint64_t failed;       /* allocations that found no room */
    size_t live_blocks;    /* allocs - frees */
};

/* Manages [base, base+size). Any alignment of base is accepted. */
void heap_init(void *base, size_t size);

/* 16-byte aligned; NULL when out of memory or size == 0. */
void *kmalloc(size_t size);
/* Zeroed. */
void *kzalloc(size_t size);
/* align is a power of two up to 4096 (DMA rings, page tables). Freed with kfree. */
void *kmalloc_aligned(size_t size, size_t align);
/* NULL is ignored. Freeing a pointer the heap did not hand out, or twice, panics with the caller named. */
void kfree(void *ptr);

void heap_get_stats(struct heap_stats *out);

struct heap_site;
/* Every allocation chain that ever allocated, copied at one moment (kernel/profiler/heap_sites.h): at most max
 * into out, and the chains past a full table into *other. out, when it is a block of this heap, is counted as
 * freed already: a snapshot does not show its own buffer. Returns the chains written. */
unsigned heap_sites_snapshot(struct heap_site *out, unsigned max, struct heap_site *other);

/* Walks every block and checks the headers and the free list; returns false and names the problem in
 * *why when the heap is corrupt. For tests and `mem check`. */
bool heap_check(const char **why);

#endif
