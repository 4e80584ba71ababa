# The stop/resume state machine under the whole stub, with threads for CPUs and the x86 register table.
test_gdb_stop_races_SRCS := gdbstub/stop.c gdbstub/park.c $(GDBSTUB_SRCS) arch/x86_64/gdb_regs.c \
                            arch/x86_64/gdb_regs.h tests/unit/gdb_stop_cpus.c tests/unit/gdb_stop_fixture.c \
                            $(wildcard gdbstub/*.h)
