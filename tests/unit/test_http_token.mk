test_http_token_SRCS := kernel/httpd/http_token.c kernel/lib/hmac.c kernel/lib/sha256.c kernel/lib/string.c
