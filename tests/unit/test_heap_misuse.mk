test_heap_misuse_SRCS := $(HEAP_SRCS) tests/unit/heap_fixture.c
