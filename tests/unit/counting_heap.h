/* tests/unit/counting_heap.h: a heap for the tests of code that allocates (the fold and its reports, the pprof
 * encoder and its writer) -- kzalloc and kfree over the C library's, counting what is live and refusing when a
 * test says so, so the test can check that a failure is handled and nothing leaks. Defined in counting_heap.c,
 * in place of kernel/heap.c. */
#ifndef TESTS_UNIT_COUNTING_HEAP_H
#define TESTS_UNIT_COUNTING_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* kzalloc'd and not yet kfree'd. */
extern int live_allocations;
/* Refusals: every allocation while allocations_fail; with allocations_after = n >= 0, n more granted and then
 * every one refused (-1: no limit); with fail_at = n > 0, the nth from now refused, and only it (0: none). */
extern bool allocations_fail;
extern int allocations_after;
extern int fail_at;

/* Nothing live, nothing refused. */
void counting_heap_reset(void);

/* An encoder under test: what it made of ctx into *data (kzalloc'd) and *len, true; or false, nothing made. */
typedef bool (*counting_heap_encoder)(const void *ctx, uint8_t **data, size_t *len);
/* Runs encode(ctx) with 0, 1, 2, ... allocations granted (fewer than most) until it succeeds: every failure
 * must hand over nothing (*data NULL, *len 0) and every call leave as much live as before it; the success's
 * bytes are kfree'd. The allocations granted when it succeeded; fails the test (cmocka) if it never did. */
int counting_heap_first_success(counting_heap_encoder encode, const void *ctx, int most);

#endif
