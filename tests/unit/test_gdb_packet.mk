test_gdb_packet_SRCS := gdbstub/packet.c gdbstub/breakpoints.c tests/unit/fake_target.c $(wildcard gdbstub/*.h)
