fuzz_netload_proto_SRCS := kernel/net/netload_proto.c kernel/sink.c kernel/format.c kernel/string.c
