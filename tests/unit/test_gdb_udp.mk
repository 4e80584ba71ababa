# The transport alone, and under the whole stub against the fake machine (a duplicated `s` steps once).
test_gdb_udp_SRCS := kernel/net/gdb_udp.c kernel/net/gdb_udp_auth.c kernel/net/sha256.c kernel/net/hmac.c \
                     tests/unit/gdb_udp_seam.c kernel/net/netpoll.c kernel/string.c \
                     gdbstub/stub.c gdbstub/commands.c gdbstub/monitor.c gdbstub/regs.c gdbstub/breakpoints.c \
                     gdbstub/packet.c tests/unit/fake_target.c kernel/parse.c kernel/format.c kernel/sink.c \
                     $(wildcard gdbstub/*.h)
