fuzz_profiler_stream_SRCS := kernel/profiler/stream_codec.c kernel/profiler/run.c kernel/profiler/raw.c kernel/task_wait.c \
                             kernel/profiler/fields.c kernel/labels.c kernel/heap.c kernel/symbols.c
