test_http_host_SRCS := kernel/httpd/http_host.c
