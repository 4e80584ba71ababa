test_stacktrace_SRCS := kernel/stacktrace.c
