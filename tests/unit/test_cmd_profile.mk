# The command runs a real profile: run control, the report and its raw form, labels, the heap, and the PMU
# layer over the fake CPU (which has none, so the tick is the source).
test_cmd_profile_SRCS := kernel/cmd_profile.c kernel/cmd_profile_stream.c kernel/profiler_stream.c tests/unit/fake_net.c kernel/profiler_args.c kernel/profiler.c kernel/profiler_report.c \
                         kernel/profiler_raw.c kernel/fields.c kernel/labels.c kernel/parse.c kernel/heap.c kernel/symbols.c \
                         kernel/sink.c kernel/format.c kernel/string.c arch/x86_64/pmu.c arch/x86_64/pmu_intel.c \
                         arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c
