# The profiler's handshake with the counter: the real profiler, fold and PMU driver on the fake CPU.
test_profiler_counter_SRCS := kernel/profiler.c kernel/profiler_report.c kernel/profiler_raw.c kernel/fields.c kernel/labels.c \
                              kernel/symbols.c kernel/parse.c kernel/sink.c kernel/format.c kernel/string.c \
                              arch/x86_64/pmu.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c \
                              tests/unit/fake_cpu.c
