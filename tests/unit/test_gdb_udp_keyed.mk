test_gdb_udp_keyed_SRCS := gdbstub/udp.c kernel/net/ratelimit.c gdbstub/udp_auth.c kernel/net/keyed_service.c kernel/lib/sha256.c \
                           kernel/lib/hmac.c tests/unit/gdb_udp_seam.c tests/unit/gdb_udp_fake_card.c tests/unit/fake_neighbour.c kernel/net/netpoll.c kernel/lib/format.c \
                           kernel/lib/sink.c kernel/lib/string.c
