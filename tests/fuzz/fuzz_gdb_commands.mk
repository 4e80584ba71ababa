# The stub's headers are listed so a change to them rebuilds the target; fake_target.c reports through cmocka.
fuzz_gdb_commands_SRCS := gdbstub/stub.c gdbstub/commands.c gdbstub/monitor.c gdbstub/regs.c gdbstub/breakpoints.c gdbstub/packet.c tests/unit/fake_target.c \
                          kernel/lib/parse.c kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c $(wildcard gdbstub/*.h)
fuzz_gdb_commands_LIBS := -lcmocka
