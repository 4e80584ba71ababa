/* kernel/heap.c: the kernel heap -- a first-fit allocator over one region, with boundary tags (a header and a
 * footer on every block) so a freed block merges with free neighbours at once, an address-ordered free list,
 * and the statistics `mem` prints. Owns the region given to heap_init(), the free list, the counters, the table
 * of allocation chains (kernel/profiler/heap_sites.h: each block names its chain's site) and the lock that guards
 * all of them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/spinlock.h"
#include "kernel/heap.h"
#include "kernel/panic.h"
#include "kernel/lib/string.h"
#include "kernel/profiler/heap_sites.h"
#include "kernel/task.h"

/* Block layout: [header 16][payload ...][footer 8], sizes multiples of 16, so every payload is 16-aligned.
 * The footer repeats the header's size word: the block after it finds its predecessor from it. */
struct block_header {
    uint64_t size_flags; /* whole block size in bytes | BLOCK_ALLOCATED */
    uint32_t magic;      /* MAGIC_USED or MAGIC_FREE: catches foreign pointers and double frees */
    uint16_t slack;      /* allocated blocks: payload bytes beyond the caller's request (under MIN_BLOCK + 16) */
    uint16_t site;       /* allocated blocks: the allocating chain's number in heap_site_table */
};

/* A free block keeps its list links where the payload would be. */
struct free_block {
    struct block_header header;
    struct free_block *prev;
    struct free_block *next;
};

#define HEAP_ALIGN 16u
#define HEADER_SIZE sizeof(struct block_header)
#define FOOTER_SIZE sizeof(uint64_t)
#define BLOCK_ALLOCATED 1u
#define SIZE_MASK (~(uint64_t)(HEAP_ALIGN - 1))
/* Room for the free-list links plus the footer, rounded to the block granularity. */
#define MIN_BLOCK (((sizeof(struct free_block) + FOOTER_SIZE) + HEAP_ALIGN - 1) & ~(size_t)(HEAP_ALIGN - 1))
#define MAX_ALIGN 4096u

#define MAGIC_USED 0x6b616c6cu /* "kall" */
#define MAGIC_FREE 0x6b667265u /* "kfre" */

_Static_assert(sizeof(struct block_header) == HEAP_ALIGN, "payloads must stay 16-aligned");
_Static_assert(MIN_BLOCK == 48, "header + two links + footer, rounded to 16");

static spinlock_t heap_lock = SPINLOCK_INIT;
static uintptr_t heap_start; /* [heap_start, heap_end) is tiled by blocks; both 16-aligned */
static uintptr_t heap_end;
static struct free_block *free_head; /* ascending addresses: first fit then prefers low memory */
/* Running totals; largest_free is computed when asked. */
static struct heap_stats stats;
/* Who allocated what (kernel/profiler/heap_sites.h). Not static: gdb's `prof heap` reads it from a paused machine. */
struct heap_sites heap_site_table;

static uintptr_t align_up(uintptr_t value, uintptr_t align)
{
    return (value + align - 1) & ~(align - 1);
}

static size_t block_size(const struct block_header *block)
{
    return (size_t)(block->size_flags & SIZE_MASK);
}

static bool block_allocated(const struct block_header *block)
{
    return (block->size_flags & BLOCK_ALLOCATED) != 0;
}

static uint64_t *block_footer(const struct block_header *block, size_t size)
{
    return (uint64_t *)((uintptr_t)block + size - FOOTER_SIZE);
}

static size_t block_capacity(size_t size)
{
    return size - HEADER_SIZE - FOOTER_SIZE;
}

static void write_block(uintptr_t at, size_t size, bool allocated, uint16_t slack)
{
    struct block_header *block = (struct block_header *)at;
    block->size_flags = (uint64_t)size | (allocated ? BLOCK_ALLOCATED : 0);
    block->magic = allocated ? MAGIC_USED : MAGIC_FREE;
    block->slack = slack;
    block->site = HEAP_SITE_OTHER;
    *block_footer(block, size) = block->size_flags;
}

/* Puts node between two list neighbours (either may be NULL). */
static void list_link(struct free_block *node, struct free_block *before, struct free_block *after)
{
    node->prev = before;
    node->next = after;
    if (before != NULL)
        before->next = node;
    else
        free_head = node;
    if (after != NULL)
        after->prev = node;
}

static void list_unlink(struct free_block *node)
{
    if (node->prev != NULL)
        node->prev->next = node->next;
    else
        free_head = node->next;
    if (node->next != NULL)
        node->next->prev = node->prev;
}

void heap_init(void *base, size_t size)
{
    unsigned long flags = spin_lock_irqsave(&heap_lock);
    uintptr_t start = align_up((uintptr_t)base, HEAP_ALIGN);
    uintptr_t raw_end = (uintptr_t)base + size;
    if (raw_end < (uintptr_t)base) /* a region reaching the top of the address space */
        raw_end = UINTPTR_MAX;
    uintptr_t end = raw_end & ~(uintptr_t)(HEAP_ALIGN - 1);

    memset(&stats, 0, sizeof stats);
    heap_sites_reset(&heap_site_table);
    free_head = NULL;
    if (end <= start || end - start < MIN_BLOCK) {
        /* Too small for one block: every allocation will fail, every kfree will be foreign. */
        heap_start = heap_end = start;
    } else {
        heap_start = start;
        heap_end = end;
        write_block(start, end - start, false, 0);
        list_link((struct free_block *)start, NULL, NULL);
        stats.total_bytes = end - start;
        stats.free_bytes = end - start;
    }
    spin_unlock_irqrestore(&heap_lock, flags);
}

/* Where an allocation of need bytes aligned to align fits in free block f: the offset (lead) of the new block
 * inside f. A lead is either 0 or big enough to stay behind as a free block of its own, so kfree never meets
 * padding it cannot account for. */
static bool fits(const struct free_block *f, size_t need, size_t align, size_t *lead_out)
{
    uintptr_t at = (uintptr_t)f;
    size_t size = block_size(&f->header);
    size_t lead = align_up(at + HEADER_SIZE, align) - HEADER_SIZE - at;
    if (lead != 0 && lead < MIN_BLOCK)
        lead = align_up(at + MIN_BLOCK + HEADER_SIZE, align) - HEADER_SIZE - at;
    if (lead > size || size - lead < need)
        return false;
    *lead_out = lead;
    return true;
}

/* Turns [f + lead, f + lead + need) into an allocated block; the lead and any tail big enough for a block
 * stay on the free list in their address order. Returns the payload. */
static void *carve(struct free_block *f, size_t lead, size_t need, size_t requested, uint16_t site)
{
    struct free_block *before = f->prev, *after = f->next;
    uintptr_t at = (uintptr_t)f;
    size_t size = block_size(&f->header);

    list_unlink(f);
    if (lead != 0) {
        write_block(at, lead, false, 0);
        list_link(f, before, after);
        before = f;
        at += lead;
        size -= lead;
    }
    if (size - need >= MIN_BLOCK) {
        write_block(at + need, size - need, false, 0);
        list_link((struct free_block *)(at + need), before, after);
        size = need;
    }
    write_block(at, size, true, (uint16_t)(block_capacity(size) - requested)); /* < MIN_BLOCK + HEAP_ALIGN */
    ((struct block_header *)at)->site = site;
    heap_sites_alloc(&heap_site_table, site, requested);

    stats.free_bytes -= size;
    stats.used_bytes += requested;
    stats.overhead_bytes += size - requested;
    if (stats.used_bytes > stats.peak_used)
        stats.peak_used = stats.used_bytes;
    stats.allocs++;
    stats.live_blocks++;
    return (void *)(at + HEADER_SIZE);
}

/* frame: the public entry's own frame (kmalloc's, kzalloc's, kmalloc_aligned's), where the caller's chain starts. */
static void *allocate(size_t size, size_t align, void *frame)
{
    if (size == 0)
        return NULL;

    uintptr_t chain[HEAP_SITE_FRAMES];
    /* The chain first, before the lock: the walk is the allocating task's time, not the heap's. Its first
     * return address is the public entry's caller. */
    unsigned depth = task_chain_from_frame(task_current(), frame, chain, HEAP_SITE_FRAMES);
    unsigned long flags = spin_lock_irqsave(&heap_lock);
    void *payload = NULL;
    /* A request this close to SIZE_MAX cannot fit anywhere; checking first keeps the rounding from wrapping. */
    if (size <= SIZE_MAX - (HEADER_SIZE + FOOTER_SIZE + MIN_BLOCK + MAX_ALIGN)) {
        size_t need = align_up(size + HEADER_SIZE + FOOTER_SIZE, HEAP_ALIGN);
        if (need < MIN_BLOCK)
            need = MIN_BLOCK;
        for (struct free_block *f = free_head; f != NULL; f = f->next) {
            size_t lead;
            if (fits(f, need, align, &lead)) {
                payload = carve(f, lead, need, size, heap_sites_find(&heap_site_table, chain, depth));
                break;
            }
        }
    }
    if (payload == NULL)
        stats.failed++;
    spin_unlock_irqrestore(&heap_lock, flags);
    return payload;
}

void *kmalloc(size_t size)
{
    return allocate(size, HEAP_ALIGN, __builtin_frame_address(0));
}

void *kzalloc(size_t size)
{
    void *payload = allocate(size, HEAP_ALIGN, __builtin_frame_address(0));
    if (payload != NULL)
        memset(payload, 0, size);
    return payload;
}

void *kmalloc_aligned(size_t size, size_t align)
{
    if (align == 0 || (align & (align - 1)) != 0 || align > MAX_ALIGN)
        panic("kmalloc_aligned: alignment %zu is not a power of two up to %u (caller %p)", align, MAX_ALIGN,
              __builtin_return_address(0));
    return allocate(size, align < HEAP_ALIGN ? HEAP_ALIGN : align, __builtin_frame_address(0));
}

/* panic() with the heap lock released first: whatever runs after the report (its own output, a test that
 * catches the panic) must not find the heap locked forever. */
#define UNLOCK_AND_PANIC(flags, ...)                      \
    do {                                                  \
        spin_unlock_irqrestore(&heap_lock, (flags));      \
        panic(__VA_ARGS__);                               \
    } while (0)

/* Joins the free block at `block` (not yet on the list, size already written) with free neighbours and puts
 * the result on the list. */
static void insert_and_coalesce(uintptr_t block, size_t size, unsigned long flags)
{
    struct block_header *prev = NULL;
    if (block > heap_start) {
        uint64_t prev_size_flags = *(const uint64_t *)(block - FOOTER_SIZE);
        size_t prev_size = (size_t)(prev_size_flags & SIZE_MASK);
        if (prev_size < MIN_BLOCK || prev_size > block - heap_start ||
            ((const struct block_header *)(block - prev_size))->size_flags != prev_size_flags)
            UNLOCK_AND_PANIC(flags, "kfree: heap corrupt: the block before %p has a broken footer",
                             (void *)(block + HEADER_SIZE));
        prev = (struct block_header *)(block - prev_size);
    }
    struct block_header *next = NULL;
    if (block + size < heap_end)
        next = (struct block_header *)(block + size);

    bool prev_free = prev != NULL && !block_allocated(prev);
    bool next_free = next != NULL && !block_allocated(next);

    if (prev_free) {
        /* The previous block keeps its list position and grows over this one (and the next). */
        size_t merged = block_size(prev) + size;
        if (next_free) {
            merged += block_size(next);
            list_unlink((struct free_block *)next);
        }
        write_block((uintptr_t)prev, merged, false, 0);
    } else if (next_free) {
        /* This block takes the next one's list position: nothing free lies between them. */
        struct free_block *old = (struct free_block *)next;
        struct free_block *before = old->prev, *after = old->next;
        list_unlink(old);
        write_block(block, size + block_size(next), false, 0);
        list_link((struct free_block *)block, before, after);
    } else {
        struct free_block *before = NULL, *after = free_head;
        while (after != NULL && (uintptr_t)after < block) {
            before = after;
            after = after->next;
        }
        list_link((struct free_block *)block, before, after);
    }
}

void kfree(void *ptr)
{
    if (ptr == NULL)
        return;
    void *caller = __builtin_return_address(0);
    unsigned long flags = spin_lock_irqsave(&heap_lock);
    uintptr_t payload = (uintptr_t)ptr;

    if (payload < heap_start + HEADER_SIZE || payload >= heap_end)
        UNLOCK_AND_PANIC(flags, "kfree: %p is outside the heap (caller %p)", ptr, caller);
    if (payload % HEAP_ALIGN != 0)
        UNLOCK_AND_PANIC(flags, "kfree: %p is misaligned, not a heap pointer (caller %p)", ptr, caller);

    struct block_header *block = (struct block_header *)(payload - HEADER_SIZE);
    /* Freed headers keep MAGIC_FREE, also when merged into a neighbour, so a second kfree still finds it. */
    if (block->magic == MAGIC_FREE)
        UNLOCK_AND_PANIC(flags, "kfree: double free of %p (caller %p)", ptr, caller);
    if (block->magic != MAGIC_USED)
        UNLOCK_AND_PANIC(flags, "kfree: %p has no heap header (magic %#x; caller %p)", ptr,
                         (unsigned)block->magic, caller);

    size_t size = block_size(block);
    if (!block_allocated(block) || size < MIN_BLOCK || size > heap_end - (uintptr_t)block ||
        *block_footer(block, size) != block->size_flags || block->slack > block_capacity(size))
        UNLOCK_AND_PANIC(flags, "kfree: block of %p is corrupt (header or footer overwritten; caller %p)",
                         ptr, caller);

    size_t requested = block_capacity(size) - block->slack;
    heap_sites_free(&heap_site_table, block->site, requested);
    stats.used_bytes -= requested;
    stats.overhead_bytes -= size - requested;
    stats.free_bytes += size;
    stats.frees++;
    stats.live_blocks--;

    write_block((uintptr_t)block, size, false, 0);
    insert_and_coalesce((uintptr_t)block, size, flags);
    spin_unlock_irqrestore(&heap_lock, flags);
}

unsigned heap_sites_snapshot(struct heap_site *out, unsigned max, struct heap_site *other)
{
    /* out is a heap block (the snapshot's buffer): counted as freed already in the copy */
    const struct block_header *own = (const struct block_header *)((uintptr_t)out - HEADER_SIZE);
    unsigned long flags = spin_lock_irqsave(&heap_lock);
    bool ours = (uintptr_t)out >= heap_start + HEADER_SIZE && (uintptr_t)out < heap_end && own->magic == MAGIC_USED;
    unsigned n = heap_sites_copy(&heap_site_table, out, max, other, ours ? own->site : HEAP_SITE_OTHER,
                                 ours ? block_capacity(block_size(own)) - own->slack : 0);
    spin_unlock_irqrestore(&heap_lock, flags);
    return n;
}

void heap_get_stats(struct heap_stats *out)
{
    unsigned long flags = spin_lock_irqsave(&heap_lock);
    *out = stats;
    out->largest_free = 0;
    for (const struct free_block *f = free_head; f != NULL; f = f->next) {
        if (block_size(&f->header) > out->largest_free)
            out->largest_free = block_size(&f->header);
    }
    spin_unlock_irqrestore(&heap_lock, flags);
}

/* The walk behind heap_check(); the caller holds the lock. Returns NULL when sound, else the problem. */
static const char *check_locked(void)
{
    size_t free_blocks = 0, free_bytes = 0, used_bytes = 0, overhead_bytes = 0, live = 0;
    bool previous_free = false;
    uintptr_t at = heap_start;

    while (at < heap_end) {
        const struct block_header *block = (const struct block_header *)at;
        if (heap_end - at < MIN_BLOCK)
            return "a block header lies too close to the heap end";
        size_t size = block_size(block);
        if ((block->size_flags & ~SIZE_MASK & ~(uint64_t)BLOCK_ALLOCATED) != 0)
            return "a block header has unknown flag bits";
        if (size < MIN_BLOCK || size > heap_end - at)
            return "a block size is out of range";
        if (block->magic != (block_allocated(block) ? MAGIC_USED : MAGIC_FREE))
            return "a block header has the wrong magic";
        if (*block_footer(block, size) != block->size_flags)
            return "a block footer does not match its header";
        if (block_allocated(block)) {
            if (block->slack > block_capacity(size))
                return "an allocated block claims more slack than it has payload";
            used_bytes += block_capacity(size) - block->slack;
            overhead_bytes += size - (block_capacity(size) - block->slack);
            live++;
            previous_free = false;
        } else {
            if (previous_free)
                return "two free blocks are adjacent (a missed coalesce)";
            free_blocks++;
            free_bytes += size;
            previous_free = true;
        }
        at += size;
    }

    /* The back-link and rising-address checks also end the walk on a cycle: a revisited entry fails both. */
    size_t listed = 0;
    const struct free_block *before = NULL;
    for (const struct free_block *f = free_head; f != NULL; f = f->next) {
        uintptr_t addr = (uintptr_t)f;
        if (addr < heap_start || addr >= heap_end || heap_end - addr < MIN_BLOCK || addr % HEAP_ALIGN != 0)
            return "a free list entry points outside the heap";
        if (f->header.magic != MAGIC_FREE || block_allocated(&f->header))
            return "a free list entry is not a free block";
        if (f->prev != before)
            return "a free list back link is broken";
        if (before != NULL && addr <= (uintptr_t)before)
            return "the free list is out of address order";
        before = f;
        listed++;
    }
    if (listed != free_blocks)
        return "free blocks are missing from the free list";
    if (free_bytes != stats.free_bytes || used_bytes != stats.used_bytes ||
        overhead_bytes != stats.overhead_bytes || live != stats.live_blocks)
        return "the statistics disagree with the blocks";
    uint64_t site_objects = heap_site_live_objects(&heap_site_table.other);
    uint64_t site_bytes = heap_site_live_bytes(&heap_site_table.other);
    for (unsigned i = 0; i < HEAP_SITES; i++) {
        site_objects += heap_site_live_objects(&heap_site_table.slot[i]);
        site_bytes += heap_site_live_bytes(&heap_site_table.slot[i]);
    }
    if (site_objects != live || site_bytes != used_bytes)
        return "the allocation sites disagree with the blocks";
    return NULL;
}

bool heap_check(const char **why)
{
    unsigned long flags = spin_lock_irqsave(&heap_lock);
    const char *problem = check_locked();
    spin_unlock_irqrestore(&heap_lock, flags);
    if (why != NULL)
        *why = problem != NULL ? problem : "ok";
    return problem == NULL;
}
