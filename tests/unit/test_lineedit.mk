test_lineedit_SRCS := kernel/shell/lineedit.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
