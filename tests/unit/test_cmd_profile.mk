# The command runs a real profile: run control, the report and its raw form, labels, the heap, and the PMU
# layer over the fake CPU (which has none, so the tick is the source).
test_cmd_profile_SRCS := $(CMD_PROFILE_SRCS) tests/unit/profiler_burn_fixture.c tests/unit/no_tasks.c
# Every symbol lookup goes through a counter (__wrap_symtab_lookup*), so the test can say none ran in the window.
test_cmd_profile_LDFLAGS := -Wl,--wrap=symtab_lookup -Wl,--wrap=symtab_lookup_return
