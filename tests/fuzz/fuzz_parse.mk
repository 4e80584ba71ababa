fuzz_parse_SRCS :=
