test_format_SRCS := kernel/format.c kernel/sink.c kernel/string.c
