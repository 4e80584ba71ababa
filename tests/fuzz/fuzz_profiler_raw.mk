fuzz_profiler_raw_SRCS := kernel/profiler/raw.c kernel/profiler/fields.c kernel/labels.c kernel/lib/string.c
