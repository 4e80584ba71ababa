test_heap_sites_SRCS := $(HEAP_SRCS) tests/unit/heap_fixture.c
