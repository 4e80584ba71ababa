# The stub's headers are listed so a change to them rebuilds the target; fake_target.c reports through cmocka.
fuzz_gdb_commands_SRCS := $(GDBSTUB_SRCS) $(wildcard gdbstub/*.h)
fuzz_gdb_commands_LIBS := -lcmocka
# Each input runs a whole debugger session over the fake CPU: 20,000 of the fixed runs (about 10 s) in
# `make fuzz-regress`.
fuzz_gdb_commands_RUNS := 20000
