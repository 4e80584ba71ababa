test_profiler_sample_SRCS := kernel/labels.c kernel/profiler.c kernel/profiler/tick_lateness.c kernel/profiler/wall.c kernel/profiler/options.c kernel/stacktrace.c $(PMU_SRCS)
