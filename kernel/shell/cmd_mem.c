/* kernel/shell/cmd_mem.c: the shell's `mem` -- the heap's totals, the chains that hold it (`mem sites`, the heap
 * profile's shell form: kernel/profiler/heap_profile.h) and a leak made on purpose (`mem leak`), which a user
 * or a test finds again with `mem sites` or /debug/pprof/heap. Owns the leaked blocks. */
#include "hal/spinlock.h"
#include "kernel/heap.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/profiler/heap_profile.h"
#include "kernel/shell/commands.h"
#include "kernel/symbols.h"

#define LEAK_BLOCKS_MAX 4096u
#define LEAK_BYTES_MIN 16u        /* room for the link that keeps the block */
#define LEAK_BYTES_MAX (1u << 20)
#define SITES_MAX 100u

/* The blocks `mem leak` holds, linked through their first bytes. */
struct leaked {
    struct leaked *next;
};
static spinlock_t leak_lock = SPINLOCK_INIT;
static struct leaked *leaks;
static unsigned leak_count;

/* noinline: every leaked block's chain starts here, one site whoever asked. */
static __attribute__((noinline)) struct leaked *leak_one(size_t bytes)
{
    return kmalloc(bytes);
}

static void hold(struct leaked *block)
{
    unsigned long flags = spin_lock_irqsave(&leak_lock);
    block->next = leaks;
    leaks = block;
    leak_count++;
    spin_unlock_irqrestore(&leak_lock, flags);
}

static int leak(struct sink *out, uint64_t n, uint64_t bytes)
{
    uint64_t made = 0;
    for (; made < n; made++) {
        struct leaked *block = leak_one((size_t)bytes);
        if (!block)
            break;
        hold(block);
    }
    sink_printf(out, "mem: leaked %llu blocks of %llu bytes on purpose (`mem leak free` gives them back)%s\n",
                (unsigned long long)made, (unsigned long long)bytes, made < n ? "; the heap had no room for more" : "");
    return made == n ? 0 : 1;
}

static int leak_free(struct sink *out)
{
    unsigned long flags = spin_lock_irqsave(&leak_lock);
    struct leaked *list = leaks;
    unsigned count = leak_count;
    leaks = 0;
    leak_count = 0;
    spin_unlock_irqrestore(&leak_lock, flags);
    while (list) {
        struct leaked *next = list->next;
        kfree(list);
        list = next;
    }
    sink_printf(out, "mem: freed %u leaked blocks\n", count);
    return 0;
}

static int sites(struct sink *out, unsigned top)
{
    struct heap_snapshot s;
    if (!heap_snapshot_take(&s)) {
        sink_puts(out, "mem sites: out of memory for the snapshot\n");
        return 1;
    }
    heap_sites_report(out, &s, top, kernel_symtab());
    heap_snapshot_free(&s);
    return 0;
}

static void totals(struct sink *out)
{
    struct heap_stats s;
    heap_get_stats(&s);
    sink_printf(out, "heap: used %zu bytes in %zu blocks, peak %zu, free %zu, largest free %zu, total %zu\n",
                s.used_bytes, s.live_blocks, s.peak_used, s.free_bytes, s.largest_free, s.total_bytes);
    sink_printf(out, "heap: allocs %llu, frees %llu, failed %llu\n", (unsigned long long)s.allocs,
                (unsigned long long)s.frees, (unsigned long long)s.failed);
}

int cmd_mem(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    uint64_t n = HEAP_SITES_SHOWN, bytes = 0;
    if (argc == 1) {
        totals(out);
        return 0;
    }
    if (strcmp(argv[1], "sites") == 0 && (argc == 2 || (argc == 3 && parse_u64_range(argv[2], 1, SITES_MAX, &n))))
        return sites(out, (unsigned)n);
    if (strcmp(argv[1], "leak") == 0 && argc == 3 && strcmp(argv[2], "free") == 0)
        return leak_free(out);
    if (strcmp(argv[1], "leak") == 0 && argc == 4 && parse_u64_range(argv[2], 1, LEAK_BLOCKS_MAX, &n) &&
        parse_u64_range(argv[3], LEAK_BYTES_MIN, LEAK_BYTES_MAX, &bytes))
        return leak(out, n, bytes);
    return shell_usage(out, "mem");
}
