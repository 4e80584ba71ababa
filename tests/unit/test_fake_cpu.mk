# The fake CPU's models on their own: each refuses what the manuals say the hardware refuses.
test_fake_cpu_SRCS := tests/unit/fake_cpu.c tests/unit/fake_cpu_models.c arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c \
                      arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c kernel/lib/sink.c kernel/lib/format.c \
                      kernel/lib/string.c
