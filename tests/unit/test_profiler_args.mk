test_profiler_args_SRCS := kernel/lib/sink.c kernel/lib/format.c kernel/profiler/args.c kernel/labels.c kernel/lib/parse.c kernel/lib/string.c
