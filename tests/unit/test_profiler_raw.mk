test_profiler_raw_SRCS := kernel/profiler_raw.c kernel/fields.c kernel/labels.c kernel/string.c
