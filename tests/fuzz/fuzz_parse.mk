fuzz_parse_SRCS := kernel/parse.c
