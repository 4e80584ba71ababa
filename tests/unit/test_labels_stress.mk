test_labels_stress_SRCS := kernel/labels.c
