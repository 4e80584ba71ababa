# The command runs a real profile: run control, the report and its raw form, labels, the heap, and the PMU
# layer over the fake CPU (which has none, so the tick is the source).
test_cmd_profile_SRCS := kernel/shell/command_table.c tests/unit/fake_commands.c kernel/shell/cmd_profile.c kernel/profiler/capture.c \
                         kernel/shell/cmd_profile_stream.c kernel/profiler/stream_codec.c \
                         kernel/profiler/stream_task.c tests/unit/fake_net.c kernel/profiler/args.c kernel/profiler.c \
                         kernel/profiler/run.c kernel/profiler/fold.c kernel/profiler/report.c \
                         kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/lib/parse.c kernel/heap.c kernel/symbols.c \
                         kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c \
                         arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c tests/unit/fake_cpu_models.c
# Every symbol lookup goes through a counter (__wrap_symtab_lookup*), so the test can say none ran in the window.
test_cmd_profile_CFLAGS := -Wl,--wrap=symtab_lookup -Wl,--wrap=symtab_lookup_return
