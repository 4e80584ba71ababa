test_gdb_udp_auth_SRCS := gdbstub/udp_auth.c kernel/net/keyed_service.c
