test_heap_aligned_SRCS := $(HEAP_SRCS) tests/unit/heap_fixture.c
