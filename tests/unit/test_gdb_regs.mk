test_gdb_regs_SRCS := gdbstub/regs.c gdbstub/breakpoints.c gdbstub/packet.c tests/unit/fake_target.c $(wildcard \
                      gdbstub/*.h)
