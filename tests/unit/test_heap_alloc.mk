test_heap_alloc_SRCS := kernel/heap.c tests/unit/heap_fixture.c
