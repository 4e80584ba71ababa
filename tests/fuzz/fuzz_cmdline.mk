fuzz_cmdline_SRCS := kernel/cmdline.c
