test_heap_alloc_SRCS := $(HEAP_SRCS) tests/unit/heap_fixture.c
