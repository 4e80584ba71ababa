fuzz_lineedit_SRCS := kernel/shell/lineedit.c
