/* tests/unit/heap_fixture.h: the static arena the heap tests run kernel/heap.c over, the block layout their
 * expected addresses are computed from, and the checks they share (heap_check sound, back to a fresh heap,
 * payload patterns that show corruption). One definition in heap_fixture.c serves every test_heap_*.c. */
#ifndef TESTS_UNIT_HEAP_FIXTURE_H
#define TESTS_UNIT_HEAP_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/heap.h"

#define ARENA_SIZE (256 * 1024)
/* Page-aligned (in heap_fixture.c) so addresses and aligned allocations can be predicted from its start. */
extern unsigned char arena[ARENA_SIZE];

/* Constants of the block layout the expectations are computed from: 16-byte header, 8-byte footer,
 * 16-byte granularity, 48-byte minimum block. */
#define HDR 16
#define OVERHEAD 24
#define MIN_BLOCK 48
size_t block_for(size_t request);

/* The statistics of the fresh heap setup() made, before the test ran. */
extern struct heap_stats baseline;

/* cmocka setup: a zeroed arena, a fresh heap over all of it, its statistics in baseline. */
int setup(void **state);

void expect_sound(void);
struct heap_stats stats_now(void);
/* Everything freed: the byte counts are exactly those of a fresh heap and one free block spans it all. */
void expect_baseline(void);

/* A pattern per seed written over a payload, and the check that it is still there. */
void fill(void *p, size_t n, unsigned seed);
void verify(const void *p, size_t n, unsigned seed);

#endif
