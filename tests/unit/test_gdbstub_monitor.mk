# The stub's headers are listed so that a change to them rebuilds the test (only the .c files are compiled).
test_gdbstub_monitor_SRCS := gdbstub/stub.c gdbstub/commands.c gdbstub/monitor.c gdbstub/regs.c gdbstub/breakpoints.c \
                             gdbstub/packet.c tests/unit/fake_target.c tests/unit/gdbstub_fixture.c kernel/lib/parse.c \
                             kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c $(wildcard gdbstub/*.h)
