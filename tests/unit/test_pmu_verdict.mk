# The probe's refusals and the order of its publication. kvsnprintf is wrapped so the test sees the moment
# pmu.c formats the verdict's reason (the last thing written before the verdict is stored).
test_pmu_verdict_SRCS := arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c \
                         tests/unit/fake_cpu.c tests/unit/fake_cpu_models.c kernel/lib/sink.c kernel/lib/format.c \
                         kernel/lib/string.c
test_pmu_verdict_CFLAGS := -Wl,--wrap=kvsnprintf
