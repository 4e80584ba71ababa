# The profiler's handshake with the counter: the real profiler, fold and PMU driver on the fake CPU.
test_profiler_counter_SRCS := $(PROFILER_SRCS) $(PMU_SRCS) tests/unit/profiler_counter_fixture.c
