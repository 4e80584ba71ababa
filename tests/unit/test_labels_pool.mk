test_labels_pool_SRCS := kernel/lib/parse.c kernel/labels.c kernel/lib/format.c kernel/lib/sink.c kernel/lib/string.c
