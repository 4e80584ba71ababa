test_profiler_args_SRCS := kernel/profiler/args.c kernel/labels.c
