/* tests/unit/counting_heap.c: kzalloc and kfree that count and refuse on demand, and an encoder run through every
 * refusal in turn (tests/unit/counting_heap.h). */
#include "counting_heap.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

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

int counting_heap_first_success(counting_heap_encoder encode, const void *ctx, int most)
{
    int baseline = live_allocations;
    for (int allow = 0; allow < most; allow++) {
        allocations_after = allow;
        uint8_t *data = (uint8_t *)1;
        size_t len = 1;
        bool succeeded = encode(ctx, &data, &len);
        allocations_after = -1;
        if (succeeded) {
            kfree(data);
        } else {
            assert_null(data);
            assert_int_equal(len, 0);
        }
        assert_int_equal(live_allocations, baseline);
        if (succeeded)
            return allow;
    }
    fail_msg("no success with fewer than %d allocations", most);
    return -1;
}
