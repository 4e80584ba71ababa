test_sha256_SRCS := kernel/net/sha256.c kernel/net/hmac.c kernel/string.c
