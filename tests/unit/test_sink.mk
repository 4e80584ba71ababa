test_sink_SRCS := kernel/sink.c kernel/format.c kernel/string.c
