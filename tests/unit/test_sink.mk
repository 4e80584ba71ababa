test_sink_SRCS := kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
