test_http_request_SRCS := kernel/httpd/http_request.c
