/* tests/bench/heap_cost.c: the driver tests/bench/heap_cost.sh runs to measure what the heap profile costs an
 * allocation and a free, built for the host with the kernel's own code generation for the kernel's sources
 * (kernel/heap.c, kernel/profiler/heap_sites.c, kernel/stacktrace.c):
 *   alloc -- N times kmalloc(64) then kfree of it, called 10 frames deep in this program's own frames, so each
 *            allocation walks its caller's chain of 8 frames (stack_walk), finds its site in the table
 *            (heap_sites_find: the hash, the probe, the compare of 8 frames) and counts it (heap_sites_alloc),
 *            and each free gives the bytes back (heap_sites_free); always the same chain, as one call site is.
 * What is faked is hal/'s (tests/unit/fake_hal.c: irq_save, irq_restore, cpu_index); the current task and its
 * stack are this thread's (tests/bench/bench_task.c). Prints "calls N" for the script to divide callgrind's count by, and checks the work
 * was real (one chain of 8 frames holding nothing after N allocations and N frees) and exits non-zero if not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_task.h"
#include "kernel/heap.h"
#include "kernel/profiler/heap_sites.h"

static void fail(const char *what)
{
    fprintf(stderr, "heap_cost: %s\n", what);
    exit(1);
}

static _Alignas(16) unsigned char region[1 << 20];

__attribute__((noinline)) static void alloc_free(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
        void *p = kmalloc(64);
        if (!p)
            fail("kmalloc(64) failed");
        kfree(p);
    }
}

/* depth frames of this program's own between main and the allocations: every walk has its 8 inside them. */
__attribute__((noinline)) static void nest(unsigned depth, unsigned long n)
{
    if (depth == 0)
        alloc_free(n);
    else
        nest(depth - 1, n);
    __asm__ volatile("" ::: "memory"); /* not a tail call: each level keeps its frame */
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "alloc") != 0 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: heap_cost alloc N\n");
        return 2;
    }
    unsigned long n = (unsigned long)atol(argv[2]);
    bench_thread_as_task("heap_cost");
    heap_init(region, sizeof region);
    nest(10, n);
    static struct heap_site rows[HEAP_SITES_MAX];
    struct heap_site other;
    unsigned count = heap_sites_snapshot(rows, HEAP_SITES_MAX, &other);
    if (other.allocs || count != 1 || rows[0].allocs != n || rows[0].frees != n ||
        rows[0].nframes != HEAP_SITE_FRAMES)
        fail("the allocations were not all counted under one chain of 8 frames, each freed");
    const char *why;
    if (!heap_check(&why))
        fail(why);
    printf("calls %lu\n", n);
    return 0;
}
