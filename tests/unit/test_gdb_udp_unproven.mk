# The insecure mode's rules for unproven senders, on the gdb UDP transport's fake card.
test_gdb_udp_unproven_SRCS := gdbstub/udp.c kernel/net/ratelimit.c gdbstub/udp_auth.c kernel/lib/sha256.c kernel/lib/hmac.c \
                     kernel/net/keyed_service.c tests/unit/gdb_udp_seam.c tests/unit/gdb_udp_fake_card.c tests/unit/fake_neighbour.c kernel/net/netpoll.c kernel/lib/string.c \
                     gdbstub/stub.c gdbstub/commands.c gdbstub/monitor.c gdbstub/regs.c gdbstub/breakpoints.c \
                     gdbstub/packet.c tests/unit/fake_target.c kernel/lib/parse.c kernel/lib/format.c kernel/lib/sink.c \
                     $(wildcard gdbstub/*.h)
