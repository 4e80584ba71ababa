# After a run, no CPU armed: the real profiler and PMU driver on the fake CPU, every model.
test_profiler_lifecycle_SRCS := kernel/profiler.c kernel/profiler/run.c kernel/profiler/fold.c kernel/profiler/report.c \
                              kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c \
                              kernel/symbols.c kernel/lib/parse.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c \
                              arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c \
                              tests/unit/fake_cpu.c tests/unit/fake_cpu_models.c \
                              tests/unit/profiler_counter_fixture.c
