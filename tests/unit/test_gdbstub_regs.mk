# The stub's headers are listed so that a change to them rebuilds the test (only the .c files are compiled).
test_gdbstub_regs_SRCS := $(GDBSTUB_SRCS) tests/unit/gdbstub_fixture.c $(wildcard gdbstub/*.h)
