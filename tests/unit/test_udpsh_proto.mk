test_udpsh_proto_SRCS := kernel/udpsh/wire.c
