test_gdb_packet_SRCS := gdbstub/packet.c gdbstub/breakpoints.c tests/unit/fake_target.c kernel/lib/string.c $(wildcard gdbstub/*.h)
