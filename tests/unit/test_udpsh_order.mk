test_udpsh_order_SRCS := kernel/udpsh/auth.c kernel/net/keyed_service.c kernel/lib/sha256.c kernel/lib/hmac.c \
                         kernel/lib/parse.c kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c \
                         kernel/net/ratelimit.c
