/* tests/bench/flame_cost.c: the driver tests/bench/flame_cost.sh runs to measure what a flame graph costs the
 * kernel, built for the host with the kernel's own code generation for kernel/profiler/flame.c and flame_svg.c
 * and linked from the unit test's list (tests/unit/test_flame.mk: the symbol table's lookups, the counting heap):
 *   render -- N times flame_render of one fold of PPROF_FOLD_ENTRIES (4,096) keys of 8 frames each, the most a
 *             profile holds: chains drawn from 512 functions of a synthetic symbol table (each key a walk down a
 *             fixed tree of calls, so chains share their outer frames as a kernel's do), weights spread over
 *             three orders of magnitude, a fifth of the leaves marked (irqs off, in irq, let in).
 * Prints "calls N", then "bytes B boxes D nodes T" of the last SVG, for the script; checks the work was real (the
 * SVG whole, its root holding every sample) and exits non-zero if not. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/heap.h"
#include "kernel/profiler/flame.h"

#define FUNCTIONS 512
#define FUNCTION_SIZE 0x100

static void fail(const char *what)
{
    fprintf(stderr, "flame_cost: %s\n", what);
    exit(1);
}

static struct ksym syms[FUNCTIONS];
static char names[FUNCTIONS * 32];
static struct symtab symbols;
static struct pprof_fold fold;

static void make_symbols(void)
{
    size_t at = 0;
    for (unsigned i = 0; i < FUNCTIONS; i++) {
        syms[i] = (struct ksym){ 0x100000 + (uint64_t)i * FUNCTION_SIZE, FUNCTION_SIZE, (uint32_t)at };
        at += (size_t)snprintf(names + at, sizeof names - at, "kernel_function_%u", i) + 1;
    }
    symbols = (struct symtab){ syms, FUNCTIONS, names, 0x100000, 0x100000 + FUNCTIONS * FUNCTION_SIZE };
}

/* Key i: frame d (from the outermost, d = 7 .. 0) is function (i >> (3 * (7 - d)/2)) mixed with its depth, so
 * keys share their outer frames in ever smaller groups, the way a kernel's chains fan out from a few entries. */
static void make_fold(void)
{
    for (unsigned i = 0; i < PPROF_FOLD_ENTRIES; i++) {
        struct pprof_fold_entry *e = &fold.entries[i];
        for (unsigned d = 0; d < PROFILE_MAX_FRAMES; d++) {
            unsigned outer = PROFILE_MAX_FRAMES - 1 - d; /* 0 the outermost */
            unsigned group = i >> (12 - 12 * outer / (PROFILE_MAX_FRAMES - 1));
            unsigned f = (group * 37 + outer * 101) % FUNCTIONS;
            e->frames[d] = syms[f].addr + (d ? 0x20 : 0x8) + (i % 4) * 4;
        }
        e->nframes = PROFILE_MAX_FRAMES;
        e->flags = i % 5 == 1 ? PROFILE_REC_IRQS_OFF : i % 5 == 2 ? PROFILE_REC_IN_IRQ
                   : i % 5 == 3 ? PROFILE_REC_LET_IN | PROFILE_REC_IRQS_OFF : 0;
        e->count = 1 + (i * 2654435761u) % 997;
        e->weight = (uint64_t)e->count * 10000000;
        fold.samples += e->count;
        fold.weight += e->weight;
    }
    fold.used = PPROF_FOLD_ENTRIES;
}

__attribute__((noinline)) static size_t render(unsigned long n, unsigned *boxes)
{
    static const struct pprof_run_info info = { .source = "tick", .period = 10000000, .window_ms = 30000,
                                                .ncpus = 4, .build_id = "0123456789abcdef" };
    const struct flame_facts facts = { &info, NULL, 1 };
    size_t len = 0;
    for (unsigned long i = 0; i < n; i++) {
        uint8_t *data;
        if (!flame_render(&fold, &facts, &symbols, &data, &len))
            fail("flame_render failed");
        if (i + 1 == n) {
            char root[64];
            snprintf(root, sizeof root, "data-n=\"%llu\"><title>all (", (unsigned long long)fold.samples);
            if (!memmem(data, len, root, strlen(root)) || memcmp(data + len - 7, "</svg>\n", 7) != 0)
                fail("the SVG is not whole, or its root does not hold every sample");
            *boxes = 0;
            for (const uint8_t *p = data; (p = memmem(p, len - (size_t)(p - data), "<g class=\"f ", 12)); p++)
                (*boxes)++;
        }
        kfree(data);
    }
    return len;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "render") != 0 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: flame_cost render N\n");
        return 2;
    }
    unsigned long n = (unsigned long)atol(argv[2]);
    make_symbols();
    make_fold();
    struct flame_tree t;
    if (!flame_tree_build(&t, &fold, &symbols))
        fail("no tree");
    unsigned nodes = t.used;
    flame_tree_free(&t);
    unsigned boxes = 0;
    size_t bytes = render(n, &boxes);
    printf("calls %lu\nbytes %zu boxes %u nodes %u\n", n, bytes, boxes, nodes);
    return 0;
}
