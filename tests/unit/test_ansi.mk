test_ansi_SRCS :=
