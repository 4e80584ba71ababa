test_symbols_SRCS := kernel/symbols.c
