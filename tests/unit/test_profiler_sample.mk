test_profiler_sample_SRCS := kernel/profiler.c kernel/stacktrace.c kernel/sink.c kernel/format.c kernel/string.c arch/x86_64/pmu.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c tests/unit/fake_cpu.c
