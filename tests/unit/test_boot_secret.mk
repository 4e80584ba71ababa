test_boot_secret_SRCS := kernel/net/boot_secret.c kernel/net/entropy_pool.c kernel/net/keyed_service.c \
                         kernel/net/net_report.c kernel/cmdline.c $(FAKE_KERNEL_SRCS)
