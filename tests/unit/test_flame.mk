test_flame_SRCS := $(FLAME_SRCS) tests/unit/counting_heap.c
