test_labels_SRCS := kernel/labels.c kernel/cmd_label.c kernel/parse.c kernel/sink.c kernel/format.c kernel/string.c
