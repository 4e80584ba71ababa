fuzz_udpsh_SRCS := kernel/net/udpsh_proto.c kernel/sink.c kernel/format.c kernel/string.c
