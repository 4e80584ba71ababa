# The stop/resume state machine under the whole stub, with threads for CPUs and the x86 register table.
test_gdb_stop_races_SRCS := gdbstub/stop.c gdbstub/stub.c gdbstub/commands.c gdbstub/monitor.c gdbstub/regs.c \
                            gdbstub/breakpoints.c gdbstub/packet.c arch/x86_64/gdb_regs.c tests/unit/fake_target.c \
                            kernel/lib/parse.c kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c arch/x86_64/gdb_regs.h \
                            tests/unit/gdb_stop_cpus.c tests/unit/gdb_stop_fixture.c $(wildcard gdbstub/*.h)
