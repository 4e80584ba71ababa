# The command and its task over the real profiler (tick source on the fake CPU), the network faked.
test_cmd_profile_stream_SRCS := $(CMD_PROFILE_SRCS) tests/unit/profiler_burn_fixture.c tests/unit/spawned_task.c
# The fixture counts symbol lookups on their way to kernel/symbols.c (__wrap_symtab_lookup*).
test_cmd_profile_stream_LDFLAGS := -Wl,--wrap=symtab_lookup -Wl,--wrap=symtab_lookup_return
