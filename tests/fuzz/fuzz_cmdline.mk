fuzz_cmdline_SRCS := kernel/cmdline.c kernel/parse.c kernel/sink.c kernel/format.c kernel/string.c
