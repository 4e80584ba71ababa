test_lapic_regs_SRCS :=
