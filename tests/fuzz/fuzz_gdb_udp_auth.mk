fuzz_gdb_udp_auth_SRCS := gdbstub/udp_auth.c kernel/net/keyed_service.c kernel/lib/sha256.c kernel/lib/hmac.c \
                          kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c
