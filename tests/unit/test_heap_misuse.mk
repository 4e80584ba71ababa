test_heap_misuse_SRCS := kernel/heap.c tests/unit/heap_fixture.c
