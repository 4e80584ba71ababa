test_profiler_wall_sweep_SRCS := kernel/labels.c kernel/profiler.c kernel/profiler/wall.c kernel/profiler/options.c kernel/stacktrace.c $(PMU_SRCS)
