test_entropy_pool_SRCS := kernel/net/entropy_pool.c kernel/lib/sha256.c kernel/lib/hmac.c kernel/lib/string.c
