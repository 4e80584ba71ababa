fuzz_cmdline_SRCS := kernel/cmdline.c kernel/lib/parse.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
