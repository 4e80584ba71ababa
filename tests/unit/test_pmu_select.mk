test_pmu_select_SRCS := $(PMU_SRCS) tests/unit/pmu_fixture.c
