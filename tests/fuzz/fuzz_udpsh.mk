fuzz_udpsh_SRCS := kernel/udpsh/wire.c kernel/udpsh/auth.c kernel/net/keyed_service.c kernel/net/ratelimit.c
