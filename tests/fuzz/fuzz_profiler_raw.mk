fuzz_profiler_raw_SRCS := kernel/profiler/raw.c kernel/profiler/run.c kernel/profiler/fields.c kernel/labels.c \
                          kernel/lib/parse.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
