# The fake CPU's models on their own: each refuses what the manuals say the hardware refuses.
test_fake_cpu_SRCS := $(PMU_SRCS)
