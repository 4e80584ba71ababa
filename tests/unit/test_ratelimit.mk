test_ratelimit_SRCS := kernel/net/ratelimit.c
