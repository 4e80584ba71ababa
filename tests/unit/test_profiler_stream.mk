# The stream's codec, packer and accounting over synthetic rings, drained by run control; the records' raw
# lines come from the raw format.
test_profiler_stream_SRCS := kernel/profiler/stream_codec.c kernel/profiler/stream_packer.c kernel/profiler/run.c kernel/profiler/raw.c \
                             kernel/profiler/fields.c kernel/labels.c $(HEAP_SRCS) kernel/symbols.c
