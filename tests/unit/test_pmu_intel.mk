test_pmu_intel_SRCS := $(PMU_SRCS) tests/unit/pmu_fixture.c
