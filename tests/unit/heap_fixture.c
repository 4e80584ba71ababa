/* tests/unit/heap_fixture.c: the arena and shared checks of the heap tests (see heap_fixture.h): setup() gives
 * each test a fresh heap over the page-aligned arena, and the expect_* helpers fail the test on any drift. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap_fixture.h"

_Alignas(4096) unsigned char arena[ARENA_SIZE];

size_t block_for(size_t request)
{
    size_t need = (request + OVERHEAD + 15) & ~(size_t)15;
    return need < MIN_BLOCK ? MIN_BLOCK : need;
}

struct heap_stats baseline;

int setup(void **state)
{
    (void)state;
    memset(arena, 0, sizeof arena);
    heap_init(arena, sizeof arena);
    heap_get_stats(&baseline);
    return 0;
}

void expect_sound(void)
{
    const char *why = NULL;
    if (!heap_check(&why))
        fail_msg("heap_check: %s", why);
}

struct heap_stats stats_now(void)
{
    struct heap_stats s;
    heap_get_stats(&s);
    return s;
}

/* Everything freed: the byte counts are exactly those of a fresh heap and one free block spans it all. */
void expect_baseline(void)
{
    struct heap_stats s = stats_now();
    assert_int_equal(s.total_bytes, ARENA_SIZE);
    assert_int_equal(s.used_bytes, 0);
    assert_int_equal(s.overhead_bytes, 0);
    assert_int_equal(s.free_bytes, baseline.free_bytes);
    assert_int_equal(s.largest_free, ARENA_SIZE);
    assert_int_equal(s.live_blocks, 0);
    assert_int_equal(s.allocs, s.frees);
    expect_sound();
}

void fill(void *p, size_t n, unsigned seed)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

void verify(const void *p, size_t n, unsigned seed)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8)))
            fail_msg("block %u corrupted at byte %zu", seed, i);
    }
}
