test_spinlock_SRCS :=
