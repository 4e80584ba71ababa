test_profile_args_SRCS := kernel/cmd_profile.c kernel/profiler.c kernel/profile_report.c kernel/parse.c kernel/heap.c kernel/symbols.c kernel/sink.c kernel/format.c kernel/string.c
