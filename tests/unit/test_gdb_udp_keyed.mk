test_gdb_udp_keyed_SRCS := gdbstub/udp.c kernel/net/ratelimit.c gdbstub/udp_auth.c kernel/net/keyed_service.c \
                           tests/unit/gdb_udp_seam.c tests/unit/gdb_udp_frames.c tests/unit/gdb_udp_fake_card.c \
                           tests/unit/fake_neighbour.c kernel/net/netpoll.c
