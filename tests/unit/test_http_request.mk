test_http_request_SRCS := kernel/httpd/http_request.c kernel/lib/format.c kernel/lib/string.c
