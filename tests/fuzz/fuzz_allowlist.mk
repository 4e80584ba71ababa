fuzz_allowlist_SRCS := kernel/net/allowlist.c kernel/sink.c kernel/format.c kernel/string.c
