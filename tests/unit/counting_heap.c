/* tests/unit/counting_heap.c: kzalloc and kfree that count and refuse on demand (tests/unit/counting_heap.h). */
#include "counting_heap.h"

#include <stddef.h>
#include <stdlib.h>

#include "kernel/heap.h"

int live_allocations;
bool allocations_fail;
int allocations_after = -1;
int fail_at;

void counting_heap_reset(void)
{
    live_allocations = 0;
    allocations_fail = false;
    allocations_after = -1;
    fail_at = 0;
}

void *kzalloc(size_t size)
{
    if (allocations_fail || allocations_after == 0)
        return NULL;
    if (allocations_after > 0)
        allocations_after--;
    if (fail_at && --fail_at == 0)
        return NULL;
    live_allocations++;
    return calloc(1, size);
}

void kfree(void *ptr)
{
    if (ptr) {
        live_allocations--;
        free(ptr);
    }
}
