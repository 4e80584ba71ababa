test_gdb_udp_auth_SRCS := kernel/net/gdb_udp_auth.c kernel/net/sha256.c kernel/net/hmac.c kernel/string.c
