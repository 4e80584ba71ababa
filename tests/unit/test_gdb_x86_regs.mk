# The x86 register table under the whole stub: packets in, struct context fields out.
test_gdb_x86_regs_SRCS := arch/x86_64/gdb_regs.c gdbstub/stub.c gdbstub/commands.c gdbstub/monitor.c gdbstub/regs.c \
                          gdbstub/breakpoints.c gdbstub/packet.c tests/unit/fake_target.c kernel/lib/parse.c \
                          kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c arch/x86_64/gdb_regs.h $(wildcard gdbstub/*.h)
