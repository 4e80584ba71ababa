test_netload_proto_SRCS := kernel/net/netload_proto.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
