test_ratelimit_SRCS := kernel/udpsh/ratelimit.c
