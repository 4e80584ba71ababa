test_httpd_worker_SRCS := kernel/httpd/httpd_worker.c kernel/httpd/httpd_flame.c kernel/httpd/pages.c kernel/httpd/http_request.c
