test_pmu_amd_SRCS := $(PMU_SRCS) tests/unit/pmu_fixture.c
