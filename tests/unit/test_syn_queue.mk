test_syn_queue_SRCS := kernel/net/syn_queue.c
