test_smp_left_SRCS := arch/x86_64/smp_left.c
