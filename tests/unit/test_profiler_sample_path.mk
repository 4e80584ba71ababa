# The sample path (profiler_tick, profiler_nmi and the PMU calls under them) on the fake CPU, with hal/spinlock.h
# replaced by counting stand-ins (fake_hal.h, FAKE_COUNT_SPINLOCKS) so a lock taken there is seen.
test_profiler_sample_path_SRCS := kernel/profiler.c kernel/profiler/run.c kernel/profiler/fold.c \
                                  kernel/profiler/report.c kernel/profiler/raw.c kernel/profiler/fields.c \
                                  kernel/labels.c kernel/symbols.c kernel/lib/parse.c kernel/lib/sink.c \
                                  kernel/lib/format.c kernel/lib/string.c arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c \
                                  arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c tests/unit/fake_cpu.c \
                                  tests/unit/fake_cpu_models.c
test_profiler_sample_path_CFLAGS := -DFAKE_COUNT_SPINLOCKS -include tests/unit/fake_hal.h
