test_profiler_args_SRCS := kernel/profiler_args.c kernel/labels.c kernel/parse.c kernel/string.c
