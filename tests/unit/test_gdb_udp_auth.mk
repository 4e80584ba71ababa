test_gdb_udp_auth_SRCS := gdbstub/udp_auth.c kernel/lib/sha256.c kernel/lib/hmac.c kernel/lib/string.c
