test_tcp_isn_SRCS := kernel/net/lwip/tcp_isn.c kernel/lib/hmac.c kernel/lib/sha256.c kernel/lib/string.c
