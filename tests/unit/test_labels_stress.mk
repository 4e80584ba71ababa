test_labels_stress_SRCS := kernel/lib/sink.c kernel/lib/format.c kernel/lib/parse.c kernel/labels.c kernel/lib/string.c
