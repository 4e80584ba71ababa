test_netpoll_neighbours_SRCS := kernel/net/netpoll.c
