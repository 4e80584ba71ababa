fuzz_allowlist_SRCS := kernel/net/allowlist.c kernel/net/netpoll.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
