test_span_log_SRCS := kernel/workload/span_log.c
