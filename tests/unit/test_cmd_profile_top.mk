# The command runs real sessions over the real profiler (tick source on the fake CPU), as test_cmd_profile.
test_cmd_profile_top_SRCS := $(CMD_PROFILE_SRCS) tests/unit/profiler_burn_fixture.c tests/unit/no_tasks.c
test_cmd_profile_top_LDFLAGS := -Wl,--wrap=symtab_lookup -Wl,--wrap=symtab_lookup_return
