test_parse_SRCS := kernel/lib/parse.c
