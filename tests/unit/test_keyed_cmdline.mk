test_keyed_cmdline_SRCS := kernel/cmdline.c kernel/net/boot_secret.c kernel/net/entropy_pool.c \
                           kernel/net/keyed_service.c kernel/net/net_report.c kernel/udpsh/auth.c \
                           kernel/net/ratelimit.c gdbstub/udp_key.c gdbstub/udp_auth.c $(FAKE_KERNEL_SRCS)
