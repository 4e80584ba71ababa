fuzz_profiler_stream_SRCS := kernel/profiler/stream_codec.c kernel/profiler/run.c kernel/profiler/raw.c \
                             kernel/profiler/fields.c kernel/labels.c $(HEAP_SRCS) kernel/symbols.c
