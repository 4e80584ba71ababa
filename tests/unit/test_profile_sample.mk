test_profile_sample_SRCS := kernel/profiler.c kernel/stacktrace.c
