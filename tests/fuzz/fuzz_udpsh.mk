fuzz_udpsh_SRCS := kernel/net/udpsh_proto.c kernel/net/udpsh_auth.c kernel/net/sha256.c kernel/net/hmac.c kernel/parse.c kernel/sink.c kernel/format.c kernel/string.c
