test_time_ref_SRCS := arch/x86_64/time_ref.c
