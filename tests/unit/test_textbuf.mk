test_textbuf_SRCS := kernel/string.c
