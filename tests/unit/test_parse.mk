test_parse_SRCS :=
