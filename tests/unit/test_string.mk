test_string_SRCS := kernel/lib/string.c
