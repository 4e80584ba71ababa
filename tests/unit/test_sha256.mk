test_sha256_SRCS := kernel/lib/sha256.c kernel/lib/hmac.c kernel/lib/string.c
