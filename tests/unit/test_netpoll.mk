test_netpoll_SRCS := kernel/net/netpoll.c
