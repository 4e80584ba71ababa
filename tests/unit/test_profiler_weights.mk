# What each sample weighs: the real profiler, fold and PMU driver on the fake CPU (the counter tests' machine).
test_profiler_weights_SRCS := $(PROFILER_SRCS) $(PMU_SRCS) tests/unit/profiler_counter_fixture.c
