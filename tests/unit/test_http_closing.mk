test_http_closing_SRCS := kernel/httpd/http_closing.c
