test_udpsh_order_SRCS := kernel/udpsh/auth.c kernel/net/keyed_service.c kernel/net/ratelimit.c tests/unit/udpsh_fixture.c
