test_textbuf_SRCS := kernel/lib/string.c
