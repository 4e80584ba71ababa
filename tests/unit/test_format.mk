test_format_SRCS :=
