test_labels_stress_SRCS := kernel/labels.c kernel/lib/string.c
