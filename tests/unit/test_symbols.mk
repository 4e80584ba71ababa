test_symbols_SRCS := kernel/symbols.c $(FAKE_KERNEL_SRCS)
