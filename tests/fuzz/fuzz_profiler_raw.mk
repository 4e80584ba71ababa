fuzz_profiler_raw_SRCS := kernel/profiler/raw.c kernel/profiler/run.c kernel/profiler/fields.c kernel/labels.c
