test_string_SRCS :=
