test_udpsh_proto_SRCS := kernel/udpsh/wire.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
