test_work_log_SRCS := kernel/workload/work_log.c
