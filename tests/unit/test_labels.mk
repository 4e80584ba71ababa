test_labels_SRCS := kernel/labels.c kernel/shell/cmd_label.c kernel/lib/parse.c kernel/lib/sink.c kernel/lib/format.c kernel/lib/string.c
