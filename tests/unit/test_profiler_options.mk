# The profiler's boot options (kernel/profiler/options.c) over the fake HAL's tick and the fake kernel's log.
test_profiler_options_SRCS := kernel/profiler/options.c $(FAKE_KERNEL_SRCS)
