# The x86 register table under the whole stub: packets in, struct context fields out.
test_gdb_x86_regs_SRCS := arch/x86_64/gdb_regs.c $(GDBSTUB_SRCS) arch/x86_64/gdb_regs.h $(wildcard gdbstub/*.h)
