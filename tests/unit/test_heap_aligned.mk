test_heap_aligned_SRCS := kernel/heap.c tests/unit/heap_fixture.c
