fuzz_http_request_SRCS := kernel/httpd/http_request.c kernel/httpd/http_host.c
