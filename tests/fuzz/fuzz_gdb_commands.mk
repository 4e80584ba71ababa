# The stub's headers are listed so a change to them rebuilds the target; fake_target.c reports through cmocka.
fuzz_gdb_commands_SRCS := $(GDBSTUB_SRCS) $(wildcard gdbstub/*.h)
fuzz_gdb_commands_LIBS := -lcmocka
