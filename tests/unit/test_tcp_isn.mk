test_tcp_isn_SRCS := kernel/net/lwip/tcp_isn.c
