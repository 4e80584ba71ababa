test_heap_SRCS := kernel/heap.c
