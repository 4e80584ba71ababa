# The stream's two profiles of headroom: the packer over rings of the real size, with a sender that records the
# next interval while it sends.
test_profiler_stream_headroom_SRCS := kernel/profiler/stream_codec.c kernel/profiler/stream_packer.c kernel/profiler/run.c kernel/profiler/raw.c \
                                      kernel/profiler/fields.c kernel/labels.c $(HEAP_SRCS) kernel/symbols.c
