test_allowlist_SRCS := kernel/net/allowlist.c kernel/net/netpoll.c
