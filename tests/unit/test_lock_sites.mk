# The spinlock's slow path over the real block table and frame walk; the current task and its stack are the test's
# own (its thread's).
test_lock_sites_SRCS := kernel/profiler/lock_sites.c kernel/profiler/block_sites.c kernel/stacktrace.c
