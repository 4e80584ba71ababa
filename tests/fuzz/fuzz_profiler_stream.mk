fuzz_profiler_stream_SRCS := kernel/profiler_stream.c kernel/profiler_report.c kernel/profiler_raw.c kernel/fields.c kernel/labels.c \
                             kernel/heap.c kernel/symbols.c kernel/parse.c kernel/sink.c kernel/format.c kernel/string.c
