test_sink_SRCS :=
