# The probe's refusals and the order of its publication. kvsnprintf is wrapped so the test sees the moment
# pmu.c formats the verdict's reason (the last thing written before the verdict is stored).
test_pmu_verdict_SRCS := $(PMU_SRCS)
test_pmu_verdict_LDFLAGS := -Wl,--wrap=kvsnprintf
