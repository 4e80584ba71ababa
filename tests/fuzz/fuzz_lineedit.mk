fuzz_lineedit_SRCS := kernel/lineedit.c kernel/sink.c kernel/format.c kernel/string.c
