test_string_SRCS := kernel/string.c
