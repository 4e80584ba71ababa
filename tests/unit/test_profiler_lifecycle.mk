# After a run, no CPU armed: the real profiler and PMU driver on the fake CPU, every model.
test_profiler_lifecycle_SRCS := $(PROFILER_SRCS) $(PMU_SRCS) tests/unit/profiler_counter_fixture.c
