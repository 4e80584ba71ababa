test_pmu_select_SRCS := arch/x86_64/pmu.c arch/x86_64/pmu_report.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c \
                        tests/unit/fake_cpu.c tests/unit/fake_cpu_models.c kernel/lib/sink.c kernel/lib/format.c \
                        kernel/lib/string.c tests/unit/pmu_fixture.c
