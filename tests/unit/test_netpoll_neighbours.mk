test_netpoll_neighbours_SRCS := kernel/net/netpoll.c kernel/lib/string.c
