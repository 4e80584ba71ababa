test_format_SRCS := kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c
