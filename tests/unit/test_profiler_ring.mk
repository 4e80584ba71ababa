test_profiler_ring_SRCS :=
