test_http_token_SRCS := kernel/httpd/http_token.c
