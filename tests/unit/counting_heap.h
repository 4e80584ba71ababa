/* tests/unit/counting_heap.h: a heap for the tests of code that allocates (the fold and its reports, the pprof
 * encoder and its writer) -- kzalloc and kfree over the C library's, counting what is live and refusing when a
 * test says so, so the test can check that a failure is handled and nothing leaks. Defined in counting_heap.c,
 * in place of kernel/heap.c. */
#ifndef TESTS_UNIT_COUNTING_HEAP_H
#define TESTS_UNIT_COUNTING_HEAP_H

#include <stdbool.h>

/* kzalloc'd and not yet kfree'd. */
extern int live_allocations;
/* Refusals: every allocation while allocations_fail; with allocations_after = n >= 0, n more granted and then
 * every one refused (-1: no limit); with fail_at = n > 0, the nth from now refused, and only it (0: none). */
extern bool allocations_fail;
extern int allocations_after;
extern int fail_at;

/* Nothing live, nothing refused. */
void counting_heap_reset(void);

#endif
