# The shell and every command in its table, with what they act on faked (fake_shell_env.c).
fuzz_shell_SRCS := kernel/shell.c kernel/lineedit.c kernel/parse.c kernel/cmd_label.c kernel/cmd_profile.c kernel/profiler_args.c kernel/cmd_system.c kernel/cmd_netload.c \
                   kernel/cmd_burn.c kernel/profiler.c kernel/profiler_report.c kernel/profiler_raw.c kernel/fields.c kernel/heap.c \
                   kernel/symbols.c kernel/net/netload_proto.c kernel/sink.c kernel/format.c kernel/string.c \
                   arch/x86_64/pmu.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c \
                   kernel/net/udpsh_proto.c kernel/cmd_profile_stream.c kernel/profiler_stream.c tests/fuzz/fake_shell_env.c
# fake_shell_env.c includes these itself, to empty their kernel-lifetime tables between inputs.
fuzz_shell_INCLUDED := kernel/labels.c kernel/net/netload.c
