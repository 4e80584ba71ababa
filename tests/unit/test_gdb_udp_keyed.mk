test_gdb_udp_keyed_SRCS := kernel/net/gdb_udp.c kernel/net/gdb_udp_auth.c kernel/net/sha256.c kernel/net/hmac.c tests/unit/gdb_udp_seam.c kernel/net/netpoll.c kernel/string.c
