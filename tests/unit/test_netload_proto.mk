test_netload_proto_SRCS := kernel/net/netload_proto.c
