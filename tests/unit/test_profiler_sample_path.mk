# The sample path (profiler_tick, profiler_nmi and the PMU calls under them) on the fake CPU, with hal/spinlock.h
# replaced by counting stand-ins (fake_hal.h, FAKE_COUNT_SPINLOCKS) so a lock taken there is seen.
test_profiler_sample_path_SRCS := $(PROFILER_SRCS) $(PMU_SRCS)
test_profiler_sample_path_CFLAGS := -DFAKE_COUNT_SPINLOCKS -include tests/unit/fake_hal.h
