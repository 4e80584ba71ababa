test_net_report_SRCS := kernel/net/net_report.c
