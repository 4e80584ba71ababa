test_udpsh_auth_SRCS := kernel/net/udpsh_auth.c kernel/net/sha256.c kernel/net/hmac.c kernel/parse.c kernel/format.c kernel/sink.c kernel/string.c
