test_entropy_pool_SRCS := kernel/net/entropy_pool.c
