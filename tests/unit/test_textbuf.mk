test_textbuf_SRCS :=
