test_labels_pool_SRCS := kernel/labels.c
