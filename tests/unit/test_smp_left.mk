test_smp_left_SRCS := arch/x86_64/smp_left.c kernel/lib/format.c kernel/lib/string.c
