test_profiler_args_SRCS := kernel/profiler/args.c kernel/labels.c kernel/lib/parse.c kernel/lib/string.c
